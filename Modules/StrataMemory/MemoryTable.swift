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

    /// The keys of the rows holding each non-null value of one column: the first column of an
    /// index of the entity (every reference column has one), so that an equality or membership
    /// filter on it reads its rows instead of every row.
    struct Lookup: Sendable {
        /// The column.
        let column: Int
        /// The storage class of the column's values; a lookup answers only for values of it.
        let storage: StorageClass
        /// Value → the keys of the rows holding it.
        var keys: [StoredValue: Set<Int64>] = [:]
    }

    /// The rows, by primary key.
    var rows: [Int64: MemoryRow] = [:]
    /// The entity's unique indexes, in schema order.
    var uniques: [UniqueIndex]
    /// One lookup per column that starts an index.
    var lookups: [Lookup]

    /// An empty table for `entity`.
    init(_ entity: EntitySchema) {
        uniques = entity.indexes.enumerated().compactMap { position, index in
            index.isUnique ? UniqueIndex(position: position, columns: index.columns) : nil
        }
        var columns: [Int] = []
        for index in entity.indexes {
            if let first = index.columns.first, !columns.contains(first) { columns.append(first) }
        }
        lookups = columns.map { Lookup(column: $0, storage: entity.columns[$0].type.storageClass) }
    }

    /// The keys of the rows that may match `filter`, from a lookup (every row that matches is
    /// among them); nil when no lookup serves the filter and every row must be tested.
    func candidates(_ filter: Filter) -> Set<Int64>? {
        switch filter {
        case .primaryKey(.equal, let key):
            return rows[key] == nil ? [] : [key]
        case .compare(let column, .equal, let value):
            return lookup(column, [value])
        case .isIn(let column, let values):
            return lookup(column, values)
        case .and(let parts):
            for part in parts { if let found = candidates(part) { return found } }
            return nil
        default:
            return nil
        }
    }

    /// The keys holding any of `values` in `column`, when a lookup covers the column and every
    /// value is of its storage class (or null, which matches nothing).
    private func lookup(_ column: Int, _ values: [StoredValue]) -> Set<Int64>? {
        guard let lookup = lookups.first(where: { $0.column == column }) else { return nil }
        var found = Set<Int64>()
        for value in values where !value.isNull {
            guard lookup.storage.admits(value) else { return nil }
            if let keys = lookup.keys[value] { found.formUnion(keys) }
        }
        return found
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
        for number in lookups.indices {
            let column = lookups[number].column
            let previous = old?.values[column]
            let next = row.values[column]
            if previous == next { continue }
            if let previous { unlist(key, previous, in: number) }
            if !next.isNull { lookups[number].keys[next, default: []].insert(key) }
        }
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
        for number in lookups.indices { unlist(key, old.values[lookups[number].column], in: number) }
        for number in uniques.indices {
            if let indexKey = uniques[number].key(of: old.values), uniques[number].owners[indexKey] == key {
                uniques[number].owners[indexKey] = nil
            }
        }
        return old
    }

    private mutating func unlist(_ key: Int64, _ value: StoredValue, in number: Int) {
        guard !value.isNull, var keys = lookups[number].keys[value] else { return }
        keys.remove(key)
        lookups[number].keys[value] = keys.isEmpty ? nil : keys
    }

    /// Rebuilds every unique lookup and value lookup from the rows (after a migration rewrote them).
    /// - Returns: the position in ``StrataStorage/EntitySchema/indexes`` of the first unique index
    ///   two rows clash on, nil when none does.
    mutating func reindex() -> Int? {
        var clash: Int?
        for number in lookups.indices {
            lookups[number].keys = [:]
            for (key, row) in rows where !row.values[lookups[number].column].isNull {
                lookups[number].keys[row.values[lookups[number].column], default: []].insert(key)
            }
        }
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
