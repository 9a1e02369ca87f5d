/// The objects of one fetch result, kept by the context so that faulting a to-many relationship
/// on one of them loads that relationship for all of them in one read (batch faulting, as Core
/// Data does for the objects of a fetch).
///
/// A context keeps the latest group per entity; the next fetch of the entity replaces it, and
/// `rollback()` and `reset()` drop them all. The objects are the result array itself (shared,
/// not copied), which the context's identity map holds anyway. Confined to its context.
final class FetchGroup {
    /// The result's objects, in result order.
    let objects: [ManagedObject]
    /// The result's objects' identities, built on the first membership question.
    private var identities: Set<ObjectIdentifier>?
    /// The to-many properties already loaded for the whole group: a later fault of one of them
    /// (on an object whose set was dropped since, by a merge say) loads just that object.
    private var batched: [Int] = []

    init(_ objects: [ManagedObject]) {
        self.objects = objects
    }

    /// Whether `object` is one of the group's objects.
    func contains(_ object: ManagedObject) -> Bool {
        if let identities { return identities.contains(ObjectIdentifier(object)) }
        let built = Set(objects.lazy.map(ObjectIdentifier.init))
        identities = built
        return built.contains(ObjectIdentifier(object))
    }

    /// Marks `property` as loaded for the group; false when it already was.
    func beginBatch(of property: Int) -> Bool {
        if batched.contains(property) { return false }
        batched.append(property)
        return true
    }
}

/// Positions of owners by primary key, for bucketing related rows by their foreign key: a
/// direct table when the keys are dense enough (they usually are: keys are allocated in
/// ascending runs), a dictionary otherwise.
struct OwnerPositions {
    private let base: Int64
    private let table: [Int32]
    private let sparse: [Int64: Int]

    /// Positions for `keys`, ascending with no duplicates.
    init(_ keys: [Int64]) {
        guard let first = keys.first, let last = keys.last else {
            base = 0
            table = []
            sparse = [:]
            return
        }
        let span = last.subtractingReportingOverflow(first)
        if !span.overflow && span.partialValue < Int64(keys.count) * 4 + 64 && keys.count < Int(Int32.max) {
            var table = [Int32](repeating: -1, count: Int(span.partialValue) + 1)
            for (position, key) in keys.enumerated() { table[Int(key - first)] = Int32(position) }
            base = first
            self.table = table
            sparse = [:]
        } else {
            base = 0
            table = []
            sparse = Dictionary(uniqueKeysWithValues: keys.enumerated().map { ($1, $0) })
        }
    }

    /// The position of `key`, or nil when it is not one of the keys.
    @inline(__always)
    func position(of key: Int64) -> Int? {
        if table.isEmpty { return sparse[key] }
        let offset = key.subtractingReportingOverflow(base)
        guard !offset.overflow, offset.partialValue >= 0, offset.partialValue < Int64(table.count) else { return nil }
        let position = table[Int(offset.partialValue)]
        return position >= 0 ? Int(position) : nil
    }
}
