import StrataStorage

/// Rewriting stored rows in place for set writes: a row is read, changed where it is, and its
/// bytes spliced (``RowCodec/splice(_:version:values:replaced:classes:into:)``): the columns that
/// did not change are copied as stored, never made into values and encoded again.
extension LMDBCommitter {
    /// The columns a rewrite changed and the values they held before, in step (reused from row
    /// to row).
    struct ColumnChanges {
        var columns: [Int] = []
        var previous: [StoredValue] = []

        mutating func removeAll() {
            columns.removeAll(keepingCapacity: true)
            previous.removeAll(keepingCapacity: true)
        }

        /// Sets `values[column]` to `value`, noting the old value, when they differ.
        mutating func set(_ column: Int, to value: StoredValue, in values: inout ContiguousArray<StoredValue>) {
            let current = values[column]
            if value == current { return }
            columns.append(column)
            previous.append(current)
            values[column] = value
        }
    }

    /// For rewrites that may change `columns`: the indexes on any of them, and the columns made into
    /// values (those, and the columns of those indexes).
    static func rewritePlan(
        _ entity: LMDBCatalog.Entity, columns: [Int]
    ) -> (indexes: [LMDBCatalog.Index], wanted: ContiguousArray<Bool>) {
        let indexes = entity.indexes.filter { $0.columns.contains(where: columns.contains) }
        var wanted = ContiguousArray(repeating: false, count: entity.layout.classes.count)
        for column in columns { wanted[column] = true }
        for index in indexes { for column in index.columns { wanted[column] = true } }
        return (indexes, wanted)
    }

    /// Reads the row `key` into `row` (the `wanted` columns made into values), lets `change` change
    /// its values in place through `changes`, and, when any changed, writes it at the next version
    /// where it stands (through `rewriter`, a cursor on the entity's database: one search for the
    /// read and the write) with new entries in the `indexes` on a changed column (unique ones
    /// checked as a row update's). Returns whether the row was written, or nil when there is no
    /// such row.
    /// - Throws: what `change` throws; `.validation` for a value its column cannot hold (NaN) or an
    ///   index key too long; `.storeFull` at the highest version; `.storeCorrupt`; LMDB errors.
    mutating func rewrite(
        _ entity: LMDBCatalog.Entity, _ key: Int64, wanted: ContiguousArray<Bool>?, indexes: [LMDBCatalog.Index],
        row: inout StoredRow, changes: inout ColumnChanges, rewriter: inout LMDBRowRewriter,
        _ change: (inout ContiguousArray<StoredValue>, inout ColumnChanges) throws -> Void
    ) throws -> Bool? {
        changes.removeAll()
        let layout = entity.layout
        let out = rowBytes
        let found = try rewriter.rewrite(primaryKey: key) { bytes -> ByteBuffer? in
            try RowCodec.decode(bytes, key: key, layout: layout, wanted: wanted, into: &row)
            try change(&row.values, &changes)
            if changes.columns.isEmpty { return nil }
            let next = try Self.nextVersion(after: row.version, entity, key)
            guard
                RowCodec.splice(
                    bytes, version: next, values: row.values, replaced: changes.columns, classes: layout.classes,
                    into: out)
            else {
                // Only the changed columns: the others were not decoded unless `wanted` (null here).
                try validate(
                    RowWrite(entity: 0, key: key, expectedVersion: 0, values: row.values), entity,
                    columns: changes.columns)
                throw StrataError.validation([
                    ValidationIssue(entity: entity.name, property: "*", message: "a value does not fit its column")
                ])
            }
            return out
        }
        guard let found else { return nil }
        guard found else { return false }
        var old: ContiguousArray<StoredValue>?
        for index in indexes where index.columns.contains(where: changes.columns.contains) {
            if old == nil {
                var values = row.values
                for (column, value) in zip(changes.columns, changes.previous) { values[column] = value }
                old = values
            }
            let oldKey = try indexKey(index, entity, old ?? row.values, key)
            let newKey = try indexKey(index, entity, row.values, key)
            if oldKey == newKey { continue }
            try txn.delete(index.dbi, oldKey)
            try putIndex(index, entity, newKey, key)
        }
        return true
    }
}
