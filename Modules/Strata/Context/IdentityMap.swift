/// One entity's identity map: primary key → the context's object for that row.
///
/// It behaves like `[Int64: ManagedObject]` but keeps the objects in registration order, so a
/// context that let go of many objects frees them in the order they were made, which is several
/// times cheaper than a hash table's scattered order (the allocator and the caches both gain).
///
/// Small maps (most contexts hold a few objects) are scanned and need no hash table. Larger
/// ones index the entries with an open-addressing table of 32-bit slots and a cheap hash:
/// primary keys need no SipHash, and a fetch that registers a hundred thousand rows finds each
/// row's slot with one probe sequence, for the lookup and the insert together.
struct IdentityMap: ExpressibleByDictionaryLiteral {
    private struct Entry {
        var key: Int64
        /// Nil once removed: a hole that keeps its key until compaction (a key appears in at
        /// most one entry, so re-registering the key fills its hole again).
        var object: ManagedObject?
    }

    /// Objects in registration order.
    private var entries: ContiguousArray<Entry> = []
    /// Per slot: entry index + 1 in the high 32 bits (0: empty) and the low 32 bits of the
    /// entry's key, so that a probe rejects other keys without reading their entries. Empty
    /// while the map is small; a power of two in size and never more than half full.
    private var slots: ContiguousArray<UInt64> = []
    private var holes = 0
    private static let linearLimit = 8

    init() {}

    init(dictionaryLiteral elements: (Int64, ManagedObject)...) {
        for (key, object) in elements { self[key] = object }
    }

    /// The number of objects.
    var count: Int { entries.count - holes }

    var isEmpty: Bool { count == 0 }

    /// The objects, in registration order.
    var values: [ManagedObject] { entries.compactMap(\.object) }

    subscript(key: Int64) -> ManagedObject? {
        get {
            guard let index = entryIndex(of: key) else { return nil }
            return entries[index].object
        }
        set {
            if let newValue {
                _ = register(key, orGet: false) { newValue }
            } else {
                removeValue(forKey: key)
            }
        }
    }

    /// The object registered for `key`, or the one `make` returns, registered under `key`.
    /// One probe sequence does both the lookup and the insert.
    @inline(__always)
    mutating func object(forKey key: Int64, orRegister make: () -> ManagedObject) -> ManagedObject {
        register(key, orGet: true, make)!
    }

    /// The object registered for `key`, or the one `load` returns (registered under `key`), or
    /// nil when `load` finds none. One probe sequence does both the lookup and the insert.
    @inline(__always)
    mutating func object(forKey key: Int64, orLoad load: () throws -> ManagedObject?) rethrows -> ManagedObject? {
        try register(key, orGet: true, load)
    }

    @discardableResult
    mutating func removeValue(forKey key: Int64) -> ManagedObject? {
        guard let index = entryIndex(of: key), let object = entries[index].object else { return nil }
        entries[index].object = nil
        holes += 1
        if holes == entries.count {
            self = IdentityMap()
        } else if holes > Self.linearLimit && holes * 2 > entries.count {
            entries.removeAll { $0.object == nil }
            holes = 0
            if !slots.isEmpty { rebuildSlots(capacity: entries.count) }
        }
        return object
    }

    mutating func removeAll() {
        self = IdentityMap()
    }

    /// Makes room for `capacity` objects in all (for a fetch about to register many).
    mutating func reserveCapacity(_ capacity: Int) {
        entries.reserveCapacity(capacity + holes)
        if capacity > Self.linearLimit && slots.count < Self.slotCount(for: capacity + holes) {
            rebuildSlots(capacity: capacity + holes)
        }
    }

    // MARK: - Table

    /// Registers `make()` under `key` unless the key holds an object; returns the key's object,
    /// or nil when `make` returns nil (then nothing is registered). With `orGet == false` an
    /// existing object is replaced.
    @inline(__always)
    private mutating func register(
        _ key: Int64, orGet: Bool, _ make: () throws -> ManagedObject?
    ) rethrows -> ManagedObject? {
        if slots.isEmpty {
            if let index = entries.firstIndex(where: { $0.key == key }) { return try fill(index, orGet: orGet, make) }
            guard let object = try make() else { return nil }
            entries.append(Entry(key: key, object: object))
            if entries.count > Self.linearLimit { rebuildSlots(capacity: entries.count) }
            return object
        }
        let (found, slot) = probe(key)
        if let found { return try fill(found, orGet: orGet, make) }
        guard let object = try make() else { return nil }
        entries.append(Entry(key: key, object: object))
        if entries.count * 2 > slots.count {
            rebuildSlots(capacity: entries.count)
        } else {
            slots[slot] = Self.slot(index: entries.count - 1, key: key)
        }
        return object
    }

    /// Puts an object into the entry of its key: a hole is filled (unless `make` returns nil),
    /// a live object kept (`orGet`) or replaced.
    @inline(__always)
    private mutating func fill(
        _ index: Int, orGet: Bool, _ make: () throws -> ManagedObject?
    ) rethrows -> ManagedObject? {
        let existing = entries[index].object
        if let existing, orGet { return existing }
        guard let object = try make() else { return nil }
        if existing == nil { holes -= 1 }
        entries[index].object = object
        return object
    }

    /// The entry holding `key` (live or a hole), if any.
    private func entryIndex(of key: Int64) -> Int? {
        if slots.isEmpty { return entries.firstIndex { $0.key == key } }
        return probe(key).entry
    }

    /// Walks the slot table from `key`'s hash: the entry holding `key`, or nil and the empty
    /// slot where `key` belongs. The table must not be empty.
    @inline(__always)
    private func probe(_ key: Int64) -> (entry: Int?, slot: Int) {
        let mask = slots.count - 1
        var slot = Self.hash(key, mask: mask)
        let tag = Self.tag(key)
        while true {
            let stored = slots[slot]
            if stored == 0 { return (nil, slot) }
            if UInt32(truncatingIfNeeded: stored) == tag {
                let index = Int(stored &>> 32) - 1
                if entries[index].key == key { return (index, slot) }
            }
            slot = (slot + 1) & mask
        }
    }

    /// Rebuilds the slot table for at least `capacity` entries.
    private mutating func rebuildSlots(capacity: Int) {
        let count = Self.slotCount(for: capacity)
        precondition(entries.count < Int(UInt32.max), "an identity map holds fewer than 2^32 objects")
        slots = ContiguousArray(repeating: 0, count: count)
        let mask = count - 1
        for index in entries.indices {
            var slot = Self.hash(entries[index].key, mask: mask)
            while slots[slot] != 0 { slot = (slot + 1) & mask }
            slots[slot] = Self.slot(index: index, key: entries[index].key)
        }
    }

    @inline(__always)
    private static func tag(_ key: Int64) -> UInt32 { UInt32(truncatingIfNeeded: key) }

    @inline(__always)
    private static func slot(index: Int, key: Int64) -> UInt64 {
        precondition(index < Int(UInt32.max), "an identity map holds fewer than 2^32 objects")
        return UInt64(index + 1) &<< 32 | UInt64(tag(key))
    }

    /// The power-of-two table size that keeps `capacity` entries at most half full.
    private static func slotCount(for capacity: Int) -> Int {
        var count = 32
        while count < capacity * 2 { count <<= 1 }
        return count
    }

    /// Primary keys are mostly dense, ascending runs, registered in that order by scans: keeping
    /// consecutive keys in consecutive slots makes a fetch walk the table sequentially instead of
    /// missing the cache on every row. Folding in the high bits spreads strided keys.
    @inline(__always)
    private static func hash(_ key: Int64, mask: Int) -> Int {
        let bits = UInt64(bitPattern: key)
        return Int(truncatingIfNeeded: bits ^ (bits >> 17) ^ (bits >> 41)) & mask
    }
}
