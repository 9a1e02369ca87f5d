import Foundation

/// A growable byte buffer written through a raw pointer: the committer encodes every row and
/// index key of a change set into two of these, so encoding costs no array bookkeeping.
///
/// Walled file (strict memory safety): the raw allocation never leaves this type except
/// through ``withBytes(_:)`` (a `RawSpan` the compiler keeps inside the closure) and the
/// `@unsafe` ``bytes``. Every append checks its room in release builds too: an append past
/// the capacity grows the buffer (``reserve(_:)`` only saves the check's slow path), so no
/// encoder bug can write past the allocation.
///
/// Lifetime rule: what ``withBytes(_:)`` hands out is valid inside the closure only.
@safe final class ByteBuffer {
    private var base: UnsafeMutableRawPointer
    /// Bytes allocated.
    private(set) var capacity: Int
    /// How many bytes are written.
    private(set) var count = 0

    init(capacity: Int = 256) {
        self.capacity = max(capacity, 16)
        unsafe base = .allocate(byteCount: self.capacity, alignment: 8)
    }

    deinit { unsafe base.deallocate() }

    /// Forgets the contents, keeping the memory.
    @inline(__always)
    func reset() { count = 0 }

    /// Makes room for `extra` more bytes (`extra` must not be negative).
    @inline(__always)
    func reserve(_ extra: Int) {
        precondition(extra >= 0, "ByteBuffer.reserve: negative size")
        if extra > capacity &- count { grow(to: count + extra) }
    }

    @inline(never)
    private func grow(to needed: Int) {
        var newCapacity = capacity * 2
        while newCapacity < needed { newCapacity *= 2 }
        let newBase = UnsafeMutableRawPointer.allocate(byteCount: newCapacity, alignment: 8)
        unsafe newBase.copyMemory(from: base, byteCount: count)
        unsafe base.deallocate()
        unsafe base = newBase
        capacity = newCapacity
    }

    /// Appends one byte.
    @inline(__always)
    func append(_ byte: UInt8) { store(byte) }

    /// Appends 8 bytes, little-endian.
    @inline(__always)
    func appendLittleEndian(_ value: UInt64) { store(value.littleEndian) }

    /// Appends 8 bytes, big-endian.
    @inline(__always)
    func appendBigEndian(_ value: UInt64) { store(value.bigEndian) }

    /// Appends 4 bytes, little-endian.
    @inline(__always)
    func appendLittleEndian(_ value: UInt32) { store(value.littleEndian) }

    /// Stores an integer's bytes as they are in memory, growing first when there is no room.
    @inline(__always)
    private func store<T: FixedWidthInteger>(_ value: T) {
        if MemoryLayout<T>.size > capacity &- count { grow(to: count + MemoryLayout<T>.size) }
        unsafe base.storeBytes(of: value, toByteOffset: count, as: T.self)
        count &+= MemoryLayout<T>.size
    }

    /// Appends raw bytes, growing first when there is no room.
    @inline(__always)
    func append(_ bytes: UnsafeRawBufferPointer) {
        guard let source = bytes.baseAddress, unsafe !bytes.isEmpty else { return }
        if bytes.count > capacity &- count { grow(to: count + bytes.count) }
        unsafe (base + count).copyMemory(from: source, byteCount: bytes.count)
        count &+= bytes.count
    }

    /// Appends the UTF-8 bytes of `text`.
    @inline(__always)
    func append(utf8 text: String) {
        let utf8 = text.utf8
        if unsafe utf8.withContiguousStorageIfAvailable({ unsafe append(UnsafeRawBufferPointer($0)) }) == nil {
            var copy = text
            copy.withUTF8 { unsafe append(UnsafeRawBufferPointer($0)) }
        }
    }

    /// Appends the bytes of `data`.
    @inline(__always)
    func append(contentsOf data: Data) {
        unsafe data.withUnsafeBytes { unsafe append($0) }
    }

    /// Appends a varint (7 bits a byte, low group first).
    @inline(__always)
    func appendVarint(_ value: UInt64) {
        var v = value
        while v >= 0x80 {
            append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        append(UInt8(v))
    }

    /// Appends the bytes written so far to another buffer.
    @inline(__always)
    func append(contentsOf other: ByteBuffer) {
        unsafe append(other.bytes)
    }

    /// Whether the bytes at `range` of this buffer are exactly the bytes written to `other`.
    /// A range outside the written bytes is never equal.
    @inline(__always)
    func bytes(in range: Range<Int>, equal other: ByteBuffer) -> Bool {
        guard range.lowerBound >= 0, range.upperBound <= count, range.count == other.count else { return false }
        if range.isEmpty { return true }
        return unsafe memcmp(base + range.lowerBound, other.base, range.count) == 0
    }

    /// The first 16 bytes written, as two little-endian words, the bytes past ``count`` read as
    /// zeros: a key of up to 16 bytes is equal to another exactly when their counts and words are.
    @inline(__always)
    func leadingWords() -> (UInt64, UInt64) {
        // Zeros after the bytes (growing first when there is no room), so that both loads read
        // written memory; the count stays.
        let written = count
        store(0 as UInt64)
        store(0 as UInt64)
        count = written
        let first = unsafe base.loadUnaligned(fromByteOffset: 0, as: UInt64.self)
        return unsafe (first, base.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
    }

    /// A 64-bit hash of the bytes written so far, varied by `seed` (a table of keys picks its
    /// own, so that which keys collide differs from table to table): 8 bytes a step, each mixed
    /// by a multiplication.
    func hash(seed: UInt64) -> UInt64 {
        let multiplier: UInt64 = 0x9E37_79B9_7F4A_7C15
        var hash = (seed ^ UInt64(count)) &* multiplier
        var offset = 0
        while offset &+ 8 <= count {
            let word = unsafe base.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
            hash = (hash ^ word) &* multiplier
            hash ^= hash &>> 29
            offset &+= 8
        }
        var word: UInt64 = 0
        var shift: UInt64 = 0
        while offset < count {
            word |= UInt64(unsafe base.load(fromByteOffset: offset, as: UInt8.self)) &<< shift
            shift &+= 8
            offset &+= 1
        }
        hash = (hash ^ word) &* multiplier
        return hash ^ (hash &>> 29)
    }

    /// Calls `body` with the bytes written so far; the span cannot leave the closure.
    @inline(__always)
    func withBytes<T, E: Error>(_ body: (RawSpan) throws(E) -> T) throws(E) -> T {
        let span = unsafe RawSpan(_unsafeBytes: bytes)
        return try body(span)
    }

    /// The bytes written so far: valid until the next write or `reset`, and not kept alive by
    /// the buffer, which is why the property is unsafe; safe code uses ``withBytes(_:)``.
    @unsafe var bytes: UnsafeRawBufferPointer { unsafe UnsafeRawBufferPointer(start: base, count: count) }

    /// The bytes written so far, as an array.
    var array: [UInt8] { unsafe Array(bytes) }
}
