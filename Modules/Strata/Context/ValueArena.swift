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
struct ValueArena: ~Copyable {
    /// Blocks that are full, with the number of slots initialized in each.
    private var filled: [(base: UnsafeMutablePointer<StoredValue>, used: Int)] = []
    /// The block slots are claimed from; nil before the first claim.
    private var current: UnsafeMutablePointer<StoredValue>?
    private var capacity = 0
    private var used = 0
    private static let firstCapacity = 16
    private static let largestCapacity = 2048

    init() {}

    deinit {
        for block in filled { Self.free(block.base, used: block.used) }
        if let current { Self.free(current, used: used) }
    }

    /// Destroys the first `used` values of a block and frees it. Value by value: the runtime's
    /// generic `deinitialize(count:)` goes through the type's value witnesses for each one.
    static func free(_ base: UnsafeMutablePointer<StoredValue>, used: Int) {
        for index in 0..<used { _ = (base + index).move() }
        base.deallocate()
    }

    /// Copies `values` into `count` fresh slots and returns the first; the slots live as long as
    /// the arena. Always exactly `count` slots (the entity's column count): a row of another
    /// length, which callers reject first, could not make an object read past its own slots.
    @inline(__always)
    mutating func store(_ values: ContiguousArray<StoredValue>, count: Int) -> UnsafeMutablePointer<StoredValue> {
        if capacity &- used < count || current == nil { startBlock(for: count) }
        let slots = current.unsafelyUnwrapped + used
        used &+= count
        Self.initialize(slots, count: count, from: values)
        return slots
    }

    /// Initializes `count` slots from `values`, with `.null` past their end. Element by element:
    /// `initialize(from:count:)` copies through the runtime's generic array copy, several times
    /// slower for a handful of enum values.
    @inline(__always)
    static func initialize(_ slots: UnsafeMutablePointer<StoredValue>, count: Int, from values: ContiguousArray<StoredValue>) {
        values.withUnsafeBufferPointer { source in
            let copied = min(source.count, count)
            for index in 0..<copied { (slots + index).initialize(to: source[index]) }
            if copied < count { (slots + copied).initialize(repeating: .null, count: count - copied) }
        }
    }

    /// Retires the current block and starts one with room for at least `count` slots.
    @inline(never)
    private mutating func startBlock(for count: Int) {
        if let current { filled.append((current, used)) }
        let grown = current == nil ? Self.firstCapacity : min(capacity * 2, Self.largestCapacity)
        capacity = max(grown, count)
        current = .allocate(capacity: capacity)
        used = 0
    }
}

/// The column values of an object that belongs to no context: a prototype, or an object made
/// with `init()` and used before it was inserted. It frees its slots with the object.
final class DetachedValues {
    let slots: UnsafeMutablePointer<StoredValue>
    private let count: Int

    init(_ values: ContiguousArray<StoredValue>) {
        count = values.count
        slots = .allocate(capacity: max(count, 1))
        ValueArena.initialize(slots, count: count, from: values)
    }

    deinit {
        ValueArena.free(slots, used: count)
    }
}
