import StrataStorage

/// Set writes (``ChangeSet/setWrites``) inside the commit's write transaction, after the change
/// set's row writes: each selects its rows (`LMDBCommitter+Selection.swift`), then updates,
/// deletes or denies them, or upserts its rows (`LMDBCommitter+Upsert.swift`), keeping every
/// index and join database in step as row writes do.
extension LMDBCommitter {
    /// Runs `writes` in order, each seeing the rows as the earlier ones left them, and returns one
    /// result per write. The caller aborts the transaction on any throw, so nothing is written.
    /// - Throws: `.validation` from a deny, an integer overflow, a value the column cannot hold
    ///   (NaN) or an index key too long; `.constraintViolation` for a unique index clash;
    ///   `.conflict` for an upserted key that is taken; `.misuse`, `.storeCorrupt`, LMDB errors.
    mutating func applySetWrites(_ writes: [SetWrite]) throws -> [SetWriteResult] {
        var results: [SetWriteResult] = []
        results.reserveCapacity(writes.count)
        for write in writes {
            let entity = try entity(write.entity)
            let result: SetWriteResult
            switch write.action {
            case .upsert(let upsert):
                result = try self.upsert(upsert, entity, number: write.entity)
            case .update(let assignments):
                let selected = try select(write.selection, entity, earlier: results)
                result = try update(selected.keys, assignments, entity)
            case .delete(let columns):
                let selected = try select(write.selection, entity, earlier: results)
                result = try delete(selected.keys, tombstoneColumns: columns, entity, number: write.entity)
            case .deny(let denial):
                let selected = try select(write.selection, entity, earlier: results)
                guard selected.keys.isEmpty else {
                    throw denial.error(
                        holders: selected.holders, relatedCount: selected.keys.count, storeIdentifier: storeIdentifier)
                }
                result = SetWriteResult()
            }
            if !conflicts.isEmpty { throw StrataError.conflict(conflicts) }
            if let violation { throw violation }
            results.append(result)
        }
        return results
    }

    /// Gives each row `keys` names the assignments, computed from its stored values; a row that
    /// would not change is left alone and not listed. Only the assigned columns and those of the
    /// indexes on them are made into values; the row's other bytes are copied as stored.
    private mutating func update(
        _ keys: [Int64], _ assignments: [SetWrite.ColumnAssignment], _ entity: LMDBCatalog.Entity
    ) throws -> SetWriteResult {
        let plan = Self.rewritePlan(entity, columns: assignments.map(\.column))
        var result = SetWriteResult()
        var row = StoredRow(key: 0, version: 0, values: [])
        var changes = ColumnChanges()
        let storeIdentifier = storeIdentifier
        try txn.withRowRewriter(entity.dbi) { rewriter in
            for key in keys {
                let written = try rewrite(
                    entity, key, wanted: plan.wanted, indexes: plan.indexes, row: &row, changes: &changes,
                    rewriter: &rewriter
                ) { values, changes in
                    for item in assignments {
                        guard let value = item.assignment.applied(to: values[item.column]) else {
                            throw SetWrite.overflow(
                                entityName: entity.name, column: entity.columns[item.column].name, key: key,
                                storeIdentifier: storeIdentifier)
                        }
                        if case .real(let real) = value, real.isNaN {
                            throw SetWrite.notANumber(
                                entityName: entity.name, column: entity.columns[item.column].name, key: key,
                                storeIdentifier: storeIdentifier)
                        }
                        changes.set(item.column, to: value, in: &values)
                    }
                }
                if written == true { result.keys.append(key) }
            }
        }
        return result
    }

    /// Deletes the rows `keys` names, with their index entries and every join link naming them,
    /// collecting the values of `tombstoneColumns` each held.
    private mutating func delete(
        _ keys: [Int64], tombstoneColumns: [Int], _ entity: LMDBCatalog.Entity, number: Int
    ) throws -> SetWriteResult {
        var result = SetWriteResult()
        result.keys.reserveCapacity(keys.count)
        // Only the indexed and tombstone columns are made into values.
        var wanted = ContiguousArray(repeating: false, count: entity.layout.classes.count)
        for index in entity.indexes { for column in index.columns { wanted[column] = true } }
        for column in tombstoneColumns { wanted[column] = true }
        let linked = catalog.joins.contains { $0.leftEntity == number || $0.rightEntity == number }
        var row = StoredRow(key: 0, version: 0, values: [])
        for key in keys {
            guard try readRow(entity, key, wanted: wanted, into: &row) else { continue }
            if !tombstoneColumns.isEmpty { result.tombstones.append(tombstoneColumns.map { row.values[$0] }) }
            for index in entity.indexes {
                try encodeIndexKey(index, entity, row.values, key)
                try txn.delete(index.dbi, key: keyBytes)
            }
            try txn.delete(entity.dbi, primaryKey: key)
            if linked { try removeLinks(entityNumber: number, key: key) }
            result.keys.append(key)
        }
        return result
    }

    /// Encodes the index key of a row into ``keyBytes``, as ``indexKey(_:_:_:_:)`` does.
    /// - Throws: `.validation` when the key exceeds LMDB's key size limit.
    func encodeIndexKey(
        _ index: LMDBCatalog.Index, _ entity: LMDBCatalog.Entity, _ values: ContiguousArray<StoredValue>, _ key: Int64
    ) throws {
        keyBytes.reset()
        var hasNull = false
        for column in index.columns {
            IndexKeyCodec.append(values[column], to: keyBytes)
            if values[column].isNull { hasNull = true }
        }
        if !index.isUnique || hasNull {
            keyBytes.reserve(8)
            keyBytes.appendBigEndian(UInt64(bitPattern: key))
        }
        guard keyBytes.count <= maxKeySize else {
            throw Self.keyTooLong(index, entity, size: keyBytes.count, maxKeySize: maxKeySize)
        }
    }

    /// Decodes the stored row `key` into `row`; false when there is none.
    func readRow(
        _ entity: LMDBCatalog.Entity, _ key: Int64, wanted: ContiguousArray<Bool>? = nil, into row: inout StoredRow
    ) throws -> Bool {
        let found: Void? = try txn.get(entity.dbi, primaryKey: key) {
            try RowCodec.decode($0, key: key, layout: entity.layout, wanted: wanted, into: &row)
        }
        return found != nil
    }
}
