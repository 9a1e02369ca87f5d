import Foundation
import StrataStorage

/// One stored row of an in-memory table: its version and its values in column order.
struct MemoryRow: Sendable {
    /// The row's version: 1 after its insert, one more after every update or touch.
    var version: Int64
    /// The values, in ``StrataStorage/EntitySchema/columns`` order.
    var values: ContiguousArray<StoredValue>
}

/// The values of one index entry, ordered by ``StrataStorage/StoredValue/order(_:_:)`` column by
/// column (within one index every non-null value is of its column's storage class, so the order
/// is total and agrees with `==`).
struct IndexValues: Comparable, Sendable {
    /// The values, most significant first.
    let values: [StoredValue]

    static func < (lhs: IndexValues, rhs: IndexValues) -> Bool {
        for index in 0..<Swift.min(lhs.values.count, rhs.values.count) {
            switch StoredValue.order(lhs.values[index], rhs.values[index]) {
            case .orderedAscending: return true
            case .orderedDescending: return false
            case .orderedSame: continue
            }
        }
        return lhs.values.count < rhs.values.count
    }

    static func == (lhs: IndexValues, rhs: IndexValues) -> Bool {
        lhs.values.count == rhs.values.count && !(lhs < rhs) && !(rhs < lhs)
    }
}

/// One entry of a value lookup: a column value and the key of a row holding it, ordered by value
/// then key, so that the rows holding one value, or a range of values, are one range of entries.
struct LookupEntry: Comparable, Sendable {
    /// The column value (never null).
    let value: StoredValue
    /// The row's primary key.
    let key: Int64

    static func < (lhs: LookupEntry, rhs: LookupEntry) -> Bool {
        switch StoredValue.order(lhs.value, rhs.value) {
        case .orderedAscending: true
        case .orderedDescending: false
        case .orderedSame: lhs.key < rhs.key
        }
    }

    static func == (lhs: LookupEntry, rhs: LookupEntry) -> Bool {
        lhs.key == rhs.key && StoredValue.order(lhs.value, rhs.value) == .orderedSame
    }
}

/// The rows of one entity, with a lookup per unique index so that a clash costs one search, and
/// an ordered lookup per column that starts an index.
///
/// A value made of ``PersistentTree``s: a commit works on a copy and the store keeps it only when
/// the whole commit passed, so a failed commit leaves nothing behind; a reader holds the table as
/// it was. A write copies the path to the entry it changes, never the table.
struct MemoryTable: Sendable {
    /// One unique index: its values (none null) → the key of the row that holds them.
    struct UniqueIndex: Sendable {
        /// The index's position in ``StrataStorage/EntitySchema/indexes``.
        let position: Int
        /// Its columns, most significant first.
        let columns: [Int]
        /// Values → the owning row's key.
        var owners = PersistentTree<IndexValues, Int64>()

        /// The index's values in `values`, nil when one of them is null (nulls never clash).
        func key(of values: ContiguousArray<StoredValue>) -> IndexValues? {
            var key: [StoredValue] = []
            key.reserveCapacity(columns.count)
            for column in columns {
                let value = values[column]
                if value.isNull { return nil }
                key.append(value)
            }
            return IndexValues(values: key)
        }
    }

    /// The rows holding each non-null value of one column, in value order: the first column of an
    /// index of the entity (every reference column has one), so that an equality, membership or
    /// range filter on it reads its rows instead of every row, and counts them without reading.
    struct Lookup: Sendable {
        /// The column.
        let column: Int
        /// The storage class of the column's values; a lookup answers only for values of it.
        let storage: StorageClass
        /// (value, key) of every row whose column is not null.
        var entries = PersistentTree<LookupEntry, Bool>()
    }

    /// The keys of the rows a filter may match, as ranges of one tree: every row that matches is
    /// in them, and their size is known before any is read.
    struct Candidates {
        /// Ranges of a lookup's entries (the rows holding a value or a range of values).
        fileprivate var ranges: [(lookup: Int, lower: LookupBound?, upper: LookupBound?)] = []
        /// A range of primary keys, when the filter is on the key.
        fileprivate var keyRange: (lower: KeyBound?, upper: KeyBound?)?
        /// Whether ``MemoryTable/forEach(_:_:)`` gives them in key order: a range of keys, or the
        /// rows holding one value.
        fileprivate(set) var isInKeyOrder = true

        /// Whether they are exactly the rows `filter` (the filter they were taken from) matches:
        /// when it is a single leaf a lookup or the key served, there is nothing left to test.
        func isExact(for filter: Filter) -> Bool {
            switch filter {
            case .primaryKey, .compare, .isIn: true
            default: false
            }
        }
    }

    fileprivate typealias LookupBound = PersistentTree<LookupEntry, Bool>.Bound
    fileprivate typealias KeyBound = PersistentTree<Int64, MemoryRow>.Bound

    /// The rows, by primary key, in key order.
    var rows = PersistentTree<Int64, MemoryRow>()
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

    /// The rows that may match `filter`, from the lookups or the primary key (every row that
    /// matches is among them); nil when none serves the filter and every row must be tested. Of
    /// the parts of an `and`, the one with the fewest rows is taken.
    func candidates(_ filter: Filter) -> Candidates? {
        switch filter {
        case .primaryKey(let comparison, let key):
            return keyCandidates(comparison, key)
        case .compare(let column, let comparison, let value):
            return lookup(column, comparison, value)
        case .isIn(let column, let values):
            return lookup(column, values)
        case .and(let parts):
            var best: (candidates: Candidates, count: Int)?
            for part in parts {
                guard let found = candidates(part) else { continue }
                let count = count(found)
                if best.map({ count < $0.count }) ?? true { best = (found, count) }
                if count == 0 { break }
            }
            return best?.candidates
        default:
            return nil
        }
    }

    /// How many rows `candidates` holds (each once: their ranges do not overlap), counted
    /// without reading them, in O(log n) per range.
    func count(_ candidates: Candidates) -> Int {
        var count = 0
        if let range = candidates.keyRange { count += rows.count(from: range.lower, to: range.upper) }
        for range in candidates.ranges {
            count += lookups[range.lookup].entries.count(from: range.lower, to: range.upper)
        }
        return count
    }

    /// Calls `body` with the key and row of every candidate, in key order for a key range and in
    /// lookup order otherwise.
    func forEach(_ candidates: Candidates, _ body: (Int64, MemoryRow) throws -> Void) rethrows {
        try walk(candidates) { key, row in
            try body(key, row)
            return true
        }
    }

    /// ``forEach(_:_:)`` until `body` returns false.
    func walk(_ candidates: Candidates, while body: (Int64, MemoryRow) throws -> Bool) rethrows {
        var going = true
        if let range = candidates.keyRange {
            try rows.forEach(from: range.lower, to: range.upper) { key, row in
                going = try body(key, row)
                return going
            }
        }
        for range in candidates.ranges where going {
            try lookups[range.lookup].entries.forEach(from: range.lower, to: range.upper) { entry, _ in
                if let row = rows[entry.key] { going = try body(entry.key, row) }
                return going
            }
        }
    }

    private func keyCandidates(_ comparison: ComparisonOperator, _ key: Int64) -> Candidates? {
        let at = { (inclusive: Bool) in KeyBound(key: key, inclusive: inclusive) }
        let range: (lower: KeyBound?, upper: KeyBound?)
        switch comparison {
        case .equal: range = (at(true), at(true))
        case .lessThan: range = (nil, at(false))
        case .lessThanOrEqual: range = (nil, at(true))
        case .greaterThan: range = (at(false), nil)
        case .greaterThanOrEqual: range = (at(true), nil)
        case .notEqual: return nil
        }
        var found = Candidates()
        found.keyRange = range
        return found
    }

    /// The rows whose `column` compares with `value` as `comparison` says, when a lookup covers
    /// the column and `value` is of its storage class.
    private func lookup(_ column: Int, _ comparison: ComparisonOperator, _ value: StoredValue) -> Candidates? {
        guard let number = lookups.firstIndex(where: { $0.column == column }) else { return nil }
        guard !value.isNull else { return Candidates() }
        guard lookups[number].storage.admits(value) else { return nil }
        guard let range = Self.range(comparison, value) else { return nil }
        var found = Candidates()
        found.ranges = [(number, range.lower, range.upper)]
        found.isInKeyOrder = comparison == .equal
        return found
    }

    /// The entries of a lookup whose value compares with `value` as `comparison` says; nil for
    /// `.notEqual`, which is no range.
    private static func range(
        _ comparison: ComparisonOperator, _ value: StoredValue
    ) -> (lower: LookupBound?, upper: LookupBound?)? {
        // Keys are positive: (value, 0) is below every entry of `value`, and only (value, .max)
        // itself is not below (value, .max).
        let below = LookupBound(key: LookupEntry(value: value, key: 0), inclusive: false)
        let through = LookupBound(key: LookupEntry(value: value, key: .max), inclusive: true)
        let past = LookupBound(key: LookupEntry(value: value, key: .max), inclusive: false)
        switch comparison {
        case .equal: return (below, through)
        case .lessThan: return (nil, below)
        case .lessThanOrEqual: return (nil, through)
        case .greaterThan: return (past, nil)
        case .greaterThanOrEqual: return (below, nil)
        case .notEqual: return nil
        }
    }

    /// The rows holding any of `values` in `column`, when a lookup covers the column and every
    /// value is of its storage class (or null, which matches nothing).
    private func lookup(_ column: Int, _ values: [StoredValue]) -> Candidates? {
        guard let number = lookups.firstIndex(where: { $0.column == column }) else { return nil }
        var found = Candidates()
        var seen = Set<StoredValue>()
        for value in values where !value.isNull {
            guard lookups[number].storage.admits(value) else { return nil }
            guard seen.insert(value).inserted, let range = Self.range(.equal, value) else { continue }
            found.ranges.append((number, range.lower, range.upper))
        }
        found.isInKeyOrder = found.ranges.count <= 1
        return found
    }

    /// The position in ``uniques`` of the first unique index whose values `values` (the row `key`
    /// is about to hold) share with another row; nil when none clashes.
    func clash(_ values: ContiguousArray<StoredValue>, key: Int64) -> Int? {
        for number in uniques.indices {
            if let indexKey = uniques[number].key(of: values), let owner = uniques[number].owners[indexKey],
                owner != key
            {
                return number
            }
        }
        return nil
    }

    /// Stores `row` under `key`, keeping the lookups in step with the row it replaces.
    /// The caller checked ``clash(_:key:)`` first.
    mutating func put(_ key: Int64, _ row: MemoryRow) {
        let old = rows.updateValue(row, forKey: key)
        for number in lookups.indices {
            let column = lookups[number].column
            let previous = old?.values[column]
            let next = row.values[column]
            if previous == next { continue }
            if let previous, !previous.isNull {
                lookups[number].entries.removeValue(forKey: LookupEntry(value: previous, key: key))
            }
            if !next.isNull { lookups[number].entries[LookupEntry(value: next, key: key)] = true }
        }
        for number in uniques.indices {
            if let old, Self.same(uniques[number].columns, old.values, row.values) { continue }
            let previous = old.flatMap { uniques[number].key(of: $0.values) }
            let next = uniques[number].key(of: row.values)
            if previous == next { continue }
            if let previous, uniques[number].owners[previous] == key { uniques[number].owners[previous] = nil }
            if let next { uniques[number].owners[next] = key }
        }
    }

    /// Whether `left` and `right` hold the same values in every one of `columns`.
    private static func same(
        _ columns: [Int], _ left: ContiguousArray<StoredValue>, _ right: ContiguousArray<StoredValue>
    ) -> Bool {
        for column in columns where left[column] != right[column] { return false }
        return true
    }

    /// Removes the row `key` and its lookup entries; returns it, nil when there was none.
    @discardableResult
    mutating func remove(_ key: Int64) -> MemoryRow? {
        guard let old = rows.removeValue(forKey: key) else { return nil }
        for number in lookups.indices {
            let value = old.values[lookups[number].column]
            if !value.isNull { lookups[number].entries.removeValue(forKey: LookupEntry(value: value, key: key)) }
        }
        for number in uniques.indices {
            if let indexKey = uniques[number].key(of: old.values), uniques[number].owners[indexKey] == key {
                uniques[number].owners[indexKey] = nil
            }
        }
        return old
    }

    /// Two rows that clash on a unique index, as ``reindex()`` finds them.
    struct UniqueClash {
        /// The index's position in ``StrataStorage/EntitySchema/indexes``.
        var position: Int
        /// The two rows' keys.
        var keys: [Int64]
        /// The values they share.
        var values: [StoredValue]
    }

    /// Rebuilds every unique lookup and value lookup from the rows (after a migration rewrote them).
    /// - Returns: the first two rows (in key order) that clash on a unique index, with the index,
    ///   nil when none do.
    mutating func reindex() -> UniqueClash? {
        var clash: UniqueClash?
        for number in lookups.indices {
            lookups[number].entries = PersistentTree()
            for (key, row) in rows where !row.values[lookups[number].column].isNull {
                lookups[number].entries[LookupEntry(value: row.values[lookups[number].column], key: key)] = true
            }
        }
        for number in uniques.indices {
            uniques[number].owners = PersistentTree()
            // Key order, so which rows clash does not depend on any other order.
            for (key, row) in rows {
                guard let indexKey = uniques[number].key(of: row.values) else { continue }
                if let other = uniques[number].owners.updateValue(key, forKey: indexKey), clash == nil {
                    clash = UniqueClash(
                        position: uniques[number].position, keys: [other, key], values: indexKey.values)
                }
            }
        }
        return clash
    }
}
