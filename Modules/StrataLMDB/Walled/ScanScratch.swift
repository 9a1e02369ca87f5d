/// Memory a scan writes on every row (an aggregate fold's per-column notes and its figures per
/// group), placed away from the scanning thread's stack in the low 12 bits of its addresses.
///
/// Why: an x86 core checks a load against the stores still in flight by the low 12 bits of their
/// addresses first (their offset in a 4 KiB page). A load whose offset matches such a store's
/// ("4K aliasing") waits as if it depended on it, even when the two are pages apart. A fold
/// stores a note per column and a figure per row, and loads its state from the stack (the fold
/// struct, the callers' frames) on every row. Where `malloc` put the notes depended on what the
/// process had freed before, and the fold's speed with it: measured by placing the notes at
/// chosen page offsets (workload 19 on LMDB, `strata-bench --engine lmdb --workloads 15,19`, one
/// to three runs per offset), notes overlapping the page offsets of the fold struct (0xC90–0xD30
/// in that run) gave 1.67–2.19× raw LMDB, nine other offsets 1.29–1.51× (Docs/Benchmarks.md).
///
/// So a scratch's elements start a fixed distance after the page offset of a stack address the
/// scan gives (``StackAnchor/here()``, taken in the frame that runs the scan; the frames the scan
/// calls lie below it), and a scan's second scratch starts where its first ends
/// (``endDistance``). Growth keeps the page offset. A scratch longer than about 3 KiB (a fold with
/// many groups) covers every page offset, the stack's too; its per-row stores then spread over
/// it.
///
/// Walled file (strict memory safety): the allocation never leaves this type; every index is
/// checked against ``count`` in release builds too.
///
/// ```swift
/// let anchor = StackAnchor.here()
/// let notes = ScanScratch(count: 4, repeating: RowField(tag: 0, bits: 0, length: 0),
///                         anchor: anchor, distance: 1024)
/// notes[2].bits = 7
/// ```
@safe final class ScanScratch<Element: BitwiseCopyable> {
    /// The allocation, freed in `deinit`.
    private var allocation: UnsafeMutableRawPointer
    /// The first element, `pageOffset` into its page.
    private var base: UnsafeMutablePointer<Element>
    /// Elements in use (`0..<count` are initialized).
    private(set) var count: Int
    /// Elements the allocation has room for.
    private var capacity: Int
    /// Where in its 4 KiB page the first element lies.
    private let pageOffset: Int
    /// How far the first element lies after the anchor, in bytes (less than a page).
    private let startDistance: Int

    /// `count` elements equal to `value`, the first one `distance` bytes after the anchor's offset
    /// in its page, rounded up to the next multiple of 64, modulo the page.
    init(count: Int, repeating value: Element, anchor: StackAnchor, distance: Int) {
        precondition(count >= 0 && distance >= 0, "ScanScratch: negative count or distance")
        precondition(MemoryLayout<Element>.alignment <= 64, "ScanScratch: elements aligned to at most 64 bytes")
        let page = StackAnchor.pageSize
        pageOffset = ((anchor.pageOffset + distance + 63) & ~63) & (page - 1)
        startDistance = (pageOffset - anchor.pageOffset) & (page - 1)
        self.count = count
        capacity = max(count, 4)
        unsafe (allocation, base) = unsafe Self.allocate(capacity: capacity, pageOffset: pageOffset)
        unsafe base.initialize(repeating: value, count: count)
    }

    deinit { unsafe allocation.deallocate() }

    /// The bytes from the first element to the end of the last one that fits `capacity`.
    static func byteCount(_ capacity: Int) -> Int { MemoryLayout<Element>.stride * capacity }

    /// How far after the anchor's page offset, in bytes, the first `count` elements end: the
    /// distance a scan's next scratch starts at, so that the two do not share page offsets.
    var endDistance: Int { startDistance + Self.byteCount(count) }

    /// An allocation with room for `capacity` elements starting at `pageOffset` in their page.
    private static func allocate(
        capacity: Int, pageOffset: Int
    ) -> (UnsafeMutableRawPointer, UnsafeMutablePointer<Element>) {
        let page = StackAnchor.pageSize
        let raw = UnsafeMutableRawPointer.allocate(byteCount: byteCount(capacity) + page, alignment: 64)
        let start = Int(bitPattern: UInt(bitPattern: raw)) & (page &- 1)
        let skip = (pageOffset &- start) & (page &- 1)
        let base = unsafe (raw + skip).bindMemory(to: Element.self, capacity: capacity)
        return unsafe (raw, base)
    }

    /// Element `index`, in place; stops the program when `index` is not in `0..<count`.
    subscript(index: Int) -> Element {
        @inline(__always) unsafeAddress {
            precondition(UInt(bitPattern: index) < UInt(bitPattern: count), "ScanScratch index out of range")
            return unsafe UnsafePointer(base + index)
        }
        @inline(__always) unsafeMutableAddress {
            precondition(UInt(bitPattern: index) < UInt(bitPattern: count), "ScanScratch index out of range")
            return unsafe base + index
        }
    }

    /// The address of element `index` as a number (for tests of the placement); `index` may be
    /// `count` (the end).
    func elementAddress(_ index: Int) -> Int {
        precondition(index >= 0 && index <= count, "ScanScratch index out of range")
        return Int(bitPattern: UInt(bitPattern: unsafe base + index))
    }

    /// The elements in use, for a walled caller's loop that checks its own indexes. Valid until
    /// the next ``append(repeating:count:)`` (which may move them) and while this scratch lives.
    @unsafe var elements: UnsafeMutableBufferPointer<Element> {
        unsafe UnsafeMutableBufferPointer(start: base, count: count)
    }

    /// Appends `added` elements equal to `value`, growing the allocation (at the same page
    /// offset) when it is full.
    func append(repeating value: Element, count added: Int) {
        precondition(added >= 0, "ScanScratch: negative count")
        if added > capacity &- count { grow(to: count &+ added) }
        unsafe (base + count).initialize(repeating: value, count: added)
        count &+= added
    }

    /// Moves the elements into an allocation with room for at least `needed`, at the same page
    /// offset.
    @inline(never)
    private func grow(to needed: Int) {
        var newCapacity = capacity * 2
        while newCapacity < needed { newCapacity *= 2 }
        let (newAllocation, newBase) = unsafe Self.allocate(capacity: newCapacity, pageOffset: pageOffset)
        unsafe newBase.initialize(from: base, count: count)
        unsafe allocation.deallocate()
        unsafe (allocation, base) = (newAllocation, newBase)
        capacity = newCapacity
    }
}

/// Where the calling thread's stack is, as an offset in a 4 KiB page: what ``ScanScratch``
/// keeps its elements away from.
struct StackAnchor {
    /// The page whose offsets ``ScanScratch`` keeps apart: the 12 low address bits a core compares
    /// first.
    static let pageSize = 4096
    /// The offset in its page of an address in the frame that took the anchor.
    let pageOffset: Int

    /// The anchor of the caller's frame (the address of a local in a frame just below it).
    @inline(never)
    static func here() -> StackAnchor {
        var probe: UInt8 = 0
        let address = unsafe withUnsafeMutablePointer(to: &probe) { UInt(bitPattern: $0) }
        return StackAnchor(pageOffset: Int(address & UInt(pageSize - 1)))
    }
}
