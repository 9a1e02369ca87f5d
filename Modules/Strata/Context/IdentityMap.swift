/// One entity's identity map: primary key → the context's object for that row.
///
/// It behaves like `[Int64: ManagedObject]` but keeps the objects in registration order, so a
/// context that let go of many objects frees them in the order they were made, which is several
/// times cheaper than a hash table's scattered order (the allocator and the caches both gain).
/// Small maps (most contexts hold a few objects) need no hash table at all.
struct IdentityMap: ExpressibleByDictionaryLiteral {
    private struct Entry {
        var key: Int64
        var object: ManagedObject?
    }

    /// Objects in registration order; removed ones leave a nil hole until compaction.
    private var entries: ContiguousArray<Entry> = []
    /// Key → index in `entries`; only kept once there are more than `linearLimit` entries.
    private var slots: [Int64: Int] = [:]
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
            guard let index = index(of: key) else { return nil }
            return entries[index].object
        }
        set {
            if let index = index(of: key) {
                if let newValue {
                    entries[index].object = newValue
                } else {
                    remove(at: index)
                }
            } else if let newValue {
                if !slots.isEmpty || entries.count >= Self.linearLimit {
                    if slots.isEmpty { rebuildSlots() }
                    slots[key] = entries.count
                }
                entries.append(Entry(key: key, object: newValue))
            }
        }
    }

    @discardableResult
    mutating func removeValue(forKey key: Int64) -> ManagedObject? {
        guard let index = index(of: key) else { return nil }
        let object = entries[index].object
        remove(at: index)
        return object
    }

    mutating func removeAll() {
        self = IdentityMap()
    }

    /// Makes room for `capacity` objects in all (for a fetch about to register many).
    mutating func reserveCapacity(_ capacity: Int) {
        entries.reserveCapacity(capacity + holes)
        if capacity > Self.linearLimit {
            if slots.isEmpty { rebuildSlots() }
            slots.reserveCapacity(capacity)
        }
    }

    private func index(of key: Int64) -> Int? {
        if slots.isEmpty {
            return entries.firstIndex { $0.key == key && $0.object != nil }
        }
        return slots[key]
    }

    private mutating func remove(at index: Int) {
        slots[entries[index].key] = nil
        entries[index].object = nil
        holes += 1
        if holes == entries.count {
            self = IdentityMap()
        } else if holes > Self.linearLimit && holes * 2 > entries.count {
            entries.removeAll { $0.object == nil }
            holes = 0
            if !slots.isEmpty || entries.count > Self.linearLimit { rebuildSlots() }
        }
    }

    private mutating func rebuildSlots() {
        slots = [:]
        slots.reserveCapacity(entries.count + 1)
        for (index, entry) in entries.enumerated() where entry.object != nil { slots[entry.key] = index }
    }
}
