import StrataStorage

/// The column values of a context's objects, kept in a few large blocks instead of one array
/// per object.
///
/// A fetch of a hundred thousand rows used to give every object its own `ContiguousArray` of
/// values: one more allocation per row while the objects are made, and one more scattered free
/// per row when the context goes. The arena hands each object a run of slots in the current
/// block instead; blocks grow geometrically, so a context with one object pays for one small
/// block and a large fetch for a few dozen.
///
/// Slots are never reused or moved: an object's slots stay where they are until the arena is
/// freed, which ``ContextLink`` does when the last object of the context (or the context) lets
/// go of it. Only the thread running the context's `perform` claims slots.
///
/// Walled file (see "Unsafe code" in `Docs/Architecture.md`): the raw blocks never leave it.
/// Everything else sees a run of slots as a ``ValueSlots``, whose every index is checked.
@safe struct ValueArena: ~Copyable {
    /// Blocks that are full, with the number of slots initialized in each.
    private var filled: [(base: UnsafeMutablePointer<StoredValue>, used: Int)] = unsafe []
    /// The block slots are claimed from; nil before the first claim.
    private var current: UnsafeMutablePointer<StoredValue>?
    private var capacity = 0
    private var used = 0
    private static let firstCapacity = 16
    private static let largestCapacity = 2048

    init() {}

    deinit {
        // (An index loop: `swift format` would glue `for unsafe block` into one word.)
        for index in unsafe filled.indices {
            let block = unsafe filled[index]
            unsafe Self.free(block.base, used: block.used)
        }
        if let current = unsafe current { unsafe Self.free(current, used: used) }
    }

    /// Destroys the first `used` values of a block and frees it. Value by value: the runtime's
    /// generic `deinitialize(count:)` goes through the type's value witnesses for each one.
    fileprivate static func free(_ base: UnsafeMutablePointer<StoredValue>, used: Int) {
        for index in 0..<used { _ = unsafe (base + index).move() }
        unsafe base.deallocate()
    }

    /// Copies `values` into `count` fresh slots (`.null` past the end of `values`) and returns
    /// them; the slots live as long as the arena. Always exactly `count` slots (the entity's
    /// column count), so an object can never reach past its own run.
    @inline(__always)
    mutating func claim(_ values: ContiguousArray<StoredValue>, count: Int) -> ValueSlots {
        precondition(count >= 0, "negative slot count")
        if unsafe capacity &- used < count || current == nil { startBlock(for: count) }
        let slots = unsafe current.unsafelyUnwrapped + used
        used &+= count
        unsafe Self.initialize(slots, count: count, from: values)
        return unsafe ValueSlots(base: slots, count: count)
    }

    /// Initializes `count` slots from `values`, with `.null` past their end. Element by element:
    /// `initialize(from:count:)` copies through the runtime's generic array copy, several times
    /// slower for a handful of enum values.
    @inline(__always)
    fileprivate static func initialize(
        _ slots: UnsafeMutablePointer<StoredValue>, count: Int, from values: ContiguousArray<StoredValue>
    ) {
        let copied = min(values.count, count)
        for index in 0..<copied { unsafe (slots + index).initialize(to: values[index]) }
        if copied < count { unsafe (slots + copied).initialize(repeating: .null, count: count - copied) }
    }

    /// Retires the current block and starts one with room for at least `count` slots.
    @inline(never)
    private mutating func startBlock(for count: Int) {
        if let current = unsafe current { unsafe filled.append((current, used)) }
        let grown = unsafe current == nil ? Self.firstCapacity : min(capacity * 2, Self.largestCapacity)
        capacity = max(grown, count)
        unsafe current = .allocate(capacity: capacity)
        used = 0
    }
}

/// One object's run of value slots, in ``EntityModel`` column order: a safe view of memory that
/// a ``ValueArena`` or a ``DetachedValues`` owns.
///
/// Every index is checked, in release builds too (`precondition`): an index outside the run
/// stops the program instead of reading or writing a neighbour's values. Reading and writing
/// copy one value; nothing else is exposed.
///
/// Lifetime rule: a run is valid while its owner lives. Only ``ManagedObject`` stores one, and
/// it holds the owner (its ``ContextLink``, which holds the arena, or its ``DetachedValues``) as
/// long as it holds the run, with one exception: an object of a batched read
/// (``ObjectContext/forEachBatch(of:size:_:)``) holds none, because the read holds its batch's
/// blocks until the batch ends and then gives every object still held a run of its own, before
/// it lets the blocks go. Code that takes `object.values` uses it while it holds `object`.
@safe struct ValueSlots: RandomAccessCollection, MutableCollection {
    private let base: UnsafeMutablePointer<StoredValue>?
    /// The number of slots, held in four bytes: a run is stored in every object, where the
    /// object's flags fit in the four bytes after it (``ManagedObject/slots``).
    private let storedCount: UInt32

    /// The number of slots.
    var count: Int {
        @inline(__always) get { Int(storedCount) }
    }

    /// No slots: the run of an object that has no model yet.
    static var empty: ValueSlots { unsafe ValueSlots(base: nil, count: 0) }

    /// Stops the program when `count` is negative or does not fit four bytes (an entity has far
    /// fewer columns).
    fileprivate init(base: UnsafeMutablePointer<StoredValue>?, count: Int) {
        unsafe self.base = base
        guard let stored = UInt32(exactly: count) else { preconditionFailure("slot count out of range: \(count)") }
        storedCount = stored
    }

    var startIndex: Int { 0 }
    var endIndex: Int { count }

    /// The value in slot `index`; stops the program when `index` is not in `0..<count`.
    subscript(index: Int) -> StoredValue {
        @inline(__always) get {
            precondition(UInt(bitPattern: index) < UInt(bitPattern: count), "value slot index out of range")
            return unsafe base.unsafelyUnwrapped[index]
        }
        @inline(__always) nonmutating set {
            precondition(UInt(bitPattern: index) < UInt(bitPattern: count), "value slot index out of range")
            unsafe base.unsafelyUnwrapped[index] = newValue
        }
    }

    /// The values as an array of their own.
    var array: ContiguousArray<StoredValue> { ContiguousArray(self) }

    /// Slot `index` itself, for the attribute accessors' fast path (``ValueSlot``); stops the
    /// program when `index` is not in `0..<count`.
    @inline(__always)
    func slot(_ index: Int) -> ValueSlot {
        precondition(UInt(bitPattern: index) < UInt(bitPattern: count), "value slot index out of range")
        return unsafe ValueSlot(pointer: UnsafePointer(base.unsafelyUnwrapped + index))
    }
}

/// One value slot, read in place: an attribute accessor (inlined into the user's module)
/// converts the value where it lies, so that a read copies nothing but its result.
///
/// Made only by ``ValueSlots/slot(_:)``, whose index is checked. Lifetime rule: valid while the
/// object it came from lives; the accessor that asks for it reads it at once and drops it.
@safe @frozen @usableFromInline
struct ValueSlot {
    @usableFromInline let pointer: UnsafePointer<StoredValue>

    fileprivate init(pointer: UnsafePointer<StoredValue>) {
        unsafe self.pointer = pointer
    }

    /// The value in the slot, borrowed in place.
    @inlinable
    var value: StoredValue {
        unsafeAddress { unsafe pointer }
    }
}

/// Column values kept apart from a context's arena, freed when their last owner goes: the values
/// of an object that belongs to no context (a prototype, or an object made with `init()` and used
/// before it was inserted, or kept after its batch of a batched read), or a block of a batched
/// read's objects (``ObjectContext/forEachBatch(of:size:_:)``), which the read holds until the
/// batch ends, after giving every object still held a copy of its own values.
@safe final class DetachedValues {
    private let base: UnsafeMutablePointer<StoredValue>
    private let capacity: Int
    /// Slots initialized so far (`0..<used`). Exempt from dynamic exclusivity checks: the
    /// initializers set it, and ``claim(_:count:)`` reads and writes it once each, calling out to
    /// nothing that could reach this object in between.
    @exclusivity(unchecked) private var used: Int

    /// One object's values, in slots of their own.
    init(_ values: ContiguousArray<StoredValue>) {
        capacity = values.count
        unsafe base = .allocate(capacity: max(capacity, 1))
        unsafe ValueArena.initialize(base, count: capacity, from: values)
        unsafe used = capacity
    }

    /// An empty block with room for `capacity` values, handed out by ``claim(_:count:)``.
    init(capacity: Int) {
        precondition(capacity >= 0, "negative block capacity")
        self.capacity = capacity
        unsafe base = .allocate(capacity: max(capacity, 1))
        unsafe used = 0
    }

    /// All the slots of a block made for one object's values (see ``ValueSlots``; valid as long
    /// as this owner lives).
    var slots: ValueSlots { unsafe ValueSlots(base: base, count: used) }

    /// Copies `values` into `count` fresh slots of the block (`.null` past the end of `values`)
    /// and returns them, valid as long as this owner lives; nil when the block has no room left.
    func claim(_ values: ContiguousArray<StoredValue>, count: Int) -> ValueSlots? {
        precondition(count >= 0, "negative slot count")
        let start = unsafe used
        guard count <= capacity &- start else { return nil }
        let slots = unsafe base + start
        unsafe ValueArena.initialize(slots, count: count, from: values)
        unsafe used = start &+ count
        return unsafe ValueSlots(base: slots, count: count)
    }

    deinit {
        unsafe ValueArena.free(base, used: used)
    }
}
