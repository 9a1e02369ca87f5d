import StrataStorage

/// One stored row of an in-memory table: its version and its values in column order.
struct MemoryRow: Sendable {
    /// The row's version: 1 after its insert, one more after every update or touch.
    var version: Int64
    /// The values, in ``StrataStorage/EntitySchema/columns`` order.
    var values: ContiguousArray<StoredValue>
}

/// The rows of one entity, with a lookup per unique index so that a clash costs one hash lookup.
///
/// A value: a commit works on a copy and the store keeps it only when the whole commit passed,
/// so a failed commit leaves nothing behind; a reader holds the table as it was (copy-on-write).
struct MemoryTable: Sendable {
    /// One unique index: its values (none null) → the key of the row that holds them.
    struct UniqueIndex: Sendable {
        /// The index's position in ``StrataStorage/EntitySchema/indexes``.
        let position: Int
        /// Its columns, most significant first.
        let columns: [Int]
        /// Values → the owning row's key.
        var owners: [[StoredValue]: Int64] = [:]

        /// The index's values in `values`, nil when one of them is null (nulls never clash).
        func key(of values: ContiguousArray<StoredValue>) -> [StoredValue]? {
            var key: [StoredValue] = []
            key.reserveCapacity(columns.count)
            for column in columns {
                let value = values[column]
                if value.isNull { return nil }
                key.append(value)
            }
            return key
        }
    }

    /// The rows, by primary key.
    var rows: [Int64: MemoryRow] = [:]
    /// The entity's unique indexes, in schema order.
    var uniques: [UniqueIndex]

    /// An empty table for `entity`.
    init(_ entity: EntitySchema) {
        uniques = entity.indexes.enumerated().compactMap { position, index in
            index.isUnique ? UniqueIndex(position: position, columns: index.columns) : nil
        }
    }

    /// The position in ``uniques`` of the first unique index whose values `values` (the row `key`
    /// is about to hold) share with another row; nil when none clashes.
    func clash(_ values: ContiguousArray<StoredValue>, key: Int64) -> Int? {
        for (number, unique) in uniques.enumerated() {
            if let indexKey = unique.key(of: values), let owner = unique.owners[indexKey], owner != key {
                return number
            }
        }
        return nil
    }

    /// Stores `row` under `key`, keeping the unique lookups in step with the row it replaces.
    /// The caller checked ``clash(_:key:)`` first.
    mutating func put(_ key: Int64, _ row: MemoryRow) {
        let old = rows.updateValue(row, forKey: key)
        for number in uniques.indices {
            let previous = old.flatMap { uniques[number].key(of: $0.values) }
            let next = uniques[number].key(of: row.values)
            if previous == next { continue }
            if let previous, uniques[number].owners[previous] == key { uniques[number].owners[previous] = nil }
            if let next { uniques[number].owners[next] = key }
        }
    }

    /// Removes the row `key` and its unique entries; returns it, nil when there was none.
    @discardableResult
    mutating func remove(_ key: Int64) -> MemoryRow? {
        guard let old = rows.removeValue(forKey: key) else { return nil }
        for number in uniques.indices {
            if let indexKey = uniques[number].key(of: old.values), uniques[number].owners[indexKey] == key {
                uniques[number].owners[indexKey] = nil
            }
        }
        return old
    }

    /// Rebuilds every unique lookup from the rows (after a migration rewrote them).
    /// - Returns: the position in ``StrataStorage/EntitySchema/indexes`` of the first unique index
    ///   two rows clash on, nil when none does.
    mutating func reindex() -> Int? {
        var clash: Int?
        for number in uniques.indices {
            uniques[number].owners = [:]
            // Key order, so which rows clash does not depend on the dictionary's order.
            for key in rows.keys.sorted() {
                guard let indexKey = uniques[number].key(of: rows[key]?.values ?? []) else { continue }
                if uniques[number].owners.updateValue(key, forKey: indexKey) != nil, clash == nil {
                    clash = uniques[number].position
                }
            }
        }
        return clash
    }
}
