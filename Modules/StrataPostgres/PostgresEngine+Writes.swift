import StrataStorage

/// The writes of a commit, set-wise: per entity (or join) and per batch of ``insertBatchSize``
/// rows, one statement whose parameters are binary arrays (`unnest($1, $2, …)`), so a change set
/// of 100,000 updates or deletes takes 50 round trips instead of 100,000.
///
/// They run after ``write(_:session:insertKeysReread:)`` has locked every row they touch (`FOR UPDATE`) and
/// compared its version, so each statement still matches every key at its expected version and
/// its affected count is checked all the same: a short count is a concurrent write the locks
/// missed, reported as SQLSTATE 40001 and listed as a conflict after the rollback.
extension PostgresEngine {
    /// The most rows one batched statement of a commit writes: inserts, updates, deletes,
    /// touches, links and unlinks alike.
    static let insertBatchSize = 2_000

    /// The savepoint around an entity's batched updates, rolled back to when they clash on a
    /// unique index (``updateRows(_:session:)``).
    private static let updateSavepoint = "strata_updates"

    /// Deletes (and their links), unlinks, updates, touches, inserts, links — in the order of the
    /// embedded engines, so unique values can move between rows within one change set.
    func applyWrites(_ changes: ChangeSet, session: PostgresSession) throws(PGFailure) {
        try checkRows(changes.deletes, statement: \.deleteBatch, verb: "deleted", session: session)
        var deleted: [Int: [Int64]] = [:]
        for delete in changes.deletes { deleted[delete.entity, default: []].append(delete.key) }
        for join in joins {
            if let keys = deleted[join.join.leftEntity] { try session.runRaw(join.deleteLefts, [.int8Array(keys)]) }
            if let keys = deleted[join.join.rightEntity] { try session.runRaw(join.deleteRights, [.int8Array(keys)]) }
        }
        try writeLinks(changes.unlinks, statement: \.unlinkBatch, session: session)
        try updateRows(changes.updates, session: session)
        try checkRows(changes.touches, statement: \.touchBatch, verb: "touched", session: session)
        try insertRows(changes.inserts, session: session)
        try writeLinks(changes.links, statement: \.linkBatch, session: session)
    }

    /// Deletes or touches rows (`statement` is ``PostgresTableLayout/deleteBatch`` or
    /// ``PostgresTableLayout/touchBatch``): keys and expected versions, batch by batch.
    private func checkRows(
        _ checks: [RowVersionCheck], statement: KeyPath<PostgresTableLayout, String>, verb: String,
        session: PostgresSession
    ) throws(PGFailure) {
        for (entity, rows) in Self.byNumber(checks, \.entity) {
            let table = tables[entity]
            try Self.forEachBatch(rows) { (batch) throws(PGFailure) in
                let parameters = [Self.int8Array(batch.map(\.key)), Self.int8Array(batch.map(\.expectedVersion))]
                let result = try session.runRaw(table[keyPath: statement], parameters)
                try Self.checkAffected(result, batch.count, table: table, verb: verb)
            }
        }
    }

    /// Updates rows, entity by entity, batch by batch (``PostgresTableLayout/updateBatch``).
    ///
    /// PostgreSQL checks a unique index row by row within a statement, in an order the plan
    /// picks, while the embedded engines (and this engine before the batches) update in the
    /// change set's order: a value moving from one row to another succeeds there when the row
    /// giving it up comes first. So an entity with a unique index is updated under a savepoint;
    /// on a unique clash its batches are rolled back and its rows updated one by one in the
    /// change set's order, which then succeeds or fails exactly as before. (A swap of two values
    /// fails either way, on every engine.)
    private func updateRows(_ updates: [RowWrite], session: PostgresSession) throws(PGFailure) {
        for (entity, rows) in Self.byNumber(updates, \.entity) {
            let table = tables[entity]
            guard rows.count > 1, table.entity.indexes.contains(where: \.isUnique) else {
                try updateBatches(rows, table: table, session: session)
                continue
            }
            try session.runRaw("SAVEPOINT \(Self.updateSavepoint)")
            do throws(PGFailure) {
                try updateBatches(rows, table: table, session: session)
            } catch {
                guard error.sqlState == "23505" else { throw error }
                try session.runRaw("ROLLBACK TO SAVEPOINT \(Self.updateSavepoint)")
                for row in rows { try updateRow(row, table: table, session: session) }
            }
            try session.runRaw("RELEASE SAVEPOINT \(Self.updateSavepoint)")
        }
    }

    /// One `UPDATE … FROM unnest(…)` per batch: keys, expected versions, one array per column.
    private func updateBatches(
        _ rows: [RowWrite], table: PostgresTableLayout, session: PostgresSession
    )
        throws(PGFailure)
    {
        try Self.forEachBatch(rows) { (batch) throws(PGFailure) in
            var parameters = [Self.int8Array(batch.map(\.key)), Self.int8Array(batch.map(\.expectedVersion))]
            parameters += Self.columnArrays(batch, table: table)
            let result = try session.runRaw(table.updateBatch, parameters)
            try Self.checkAffected(result, batch.count, table: table, verb: "updated")
        }
    }

    /// One row's update (``PostgresTableLayout/update``): the fallback of ``updateRows(_:session:)``.
    private func updateRow(_ row: RowWrite, table: PostgresTableLayout, session: PostgresSession) throws(PGFailure) {
        var parameters: [PGParameter] = [.int8(row.key), .int8(row.expectedVersion + 1)]
        for (column, storageClass) in table.storageClasses.enumerated() {
            parameters.append(Self.parameter(row.values[column], storageClass: storageClass))
        }
        parameters.append(.int8(row.expectedVersion))
        try Self.checkAffected(try session.runRaw(table.update, parameters), 1, table: table, verb: "updated")
    }

    /// Links or unlinks pairs (`statement` is ``PostgresJoinLayout/linkBatch`` or
    /// ``PostgresJoinLayout/unlinkBatch``), join by join, batch by batch. Both are idempotent, as
    /// they were row by row: a pair linked twice or unlinked while absent is no error.
    private func writeLinks(
        _ links: [JoinLink], statement: KeyPath<PostgresJoinLayout, String>, session: PostgresSession
    ) throws(PGFailure) {
        for (join, pairs) in Self.byNumber(links, \.join) {
            try Self.forEachBatch(pairs) { (batch) throws(PGFailure) in
                let parameters = [Self.int8Array(batch.map(\.leftKey)), Self.int8Array(batch.map(\.rightKey))]
                try session.runRaw(joins[join][keyPath: statement], parameters)
            }
        }
    }

    /// Inserts rows, entity by entity, in batches of ``insertBatchSize``: one
    /// `INSERT … SELECT … FROM unnest(…)` per batch, one binary array per column.
    private func insertRows(_ inserts: [RowWrite], session: PostgresSession) throws(PGFailure) {
        for (entity, rows) in Self.byNumber(inserts, \.entity) {
            let table = tables[entity]
            try Self.forEachBatch(rows) { (batch) throws(PGFailure) in
                let parameters = [Self.int8Array(batch.map(\.key))] + Self.columnArrays(batch, table: table)
                // A key already stored (a concurrent commit's, or a misused key; insert keys are
                // not looked up first) or twice in this change set fails on the primary key:
                // `translate` makes it a conflict, read after the rollback.
                try session.runRaw(table.insertBatch, parameters)
            }
        }
    }

    /// A short affected count: the rows were locked and checked, so a row not written is a
    /// concurrent write (or a key twice in the change set), listed once the transaction is
    /// rolled back (SQLSTATE 40001, as ``insertRows(_:session:)`` reports a taken key).
    private static func checkAffected(
        _ result: PGResult, _ expected: Int, table: PostgresTableLayout, verb: String
    ) throws(PGFailure) {
        guard result.affectedRows != expected else { return }
        throw PGFailure(
            sqlState: "40001",
            message: """
                \(expected - result.affectedRows) of \(expected) rows of \(table.entity.name) were not \(verb): \
                written concurrently or named twice
                """,
            connectionBroken: false)
    }

    /// The values of `rows`, one binary array per column of `table`.
    private static func columnArrays(_ rows: ArraySlice<RowWrite>, table: PostgresTableLayout) -> [PGParameter] {
        var columns = table.storageClasses.map {
            PGArrayEncoder(elementOID: PostgresTableLayout.typeOID($0), reservingElements: rows.count)
        }
        for row in rows {
            for (column, storageClass) in table.storageClasses.enumerated() {
                columns[column].append(parameter(row.values[column], storageClass: storageClass))
            }
        }
        return columns.indices.map { columns[$0].finish() }
    }

    /// A binary `int8[]` built in one buffer.
    static func int8Array(_ values: [Int64]) -> PGParameter {
        var array = PGArrayEncoder(elementOID: PGParameter.int8OID, reservingElements: values.count)
        for value in values { array.append(.int8(value)) }
        return array.finish()
    }

    /// `items` grouped by entity (or join) number, numbers ascending, each group in the change
    /// set's order.
    private static func byNumber<Item>(_ items: [Item], _ number: (Item) -> Int) -> [(Int, [Item])] {
        // One entity (a batch insert, a purge): one group, with no hashing a row.
        guard let first = items.first.map(number) else { return [] }
        if items.allSatisfy({ number($0) == first }) { return [(first, items)] }
        var groups: [Int: [Item]] = [:]
        for item in items { groups[number(item), default: []].append(item) }
        return groups.keys.sorted().map { ($0, groups[$0, default: []]) }
    }

    /// Calls `body` with consecutive slices of at most ``insertBatchSize`` items.
    private static func forEachBatch<Item>(
        _ items: [Item], _ body: (ArraySlice<Item>) throws(PGFailure) -> Void
    ) throws(PGFailure) {
        var start = 0
        while start < items.count {
            try body(items[start..<min(start + insertBatchSize, items.count)])
            start += insertBatchSize
        }
    }

    /// A stored value bound as its column's type.
    static func parameter(_ value: StoredValue, storageClass: StorageClass) -> PGParameter {
        switch value {
        case .null: .null(oid: PostgresTableLayout.typeOID(storageClass))
        case .integer(let v): storageClass == .real ? .float8(Double(v)) : .int8(v)
        case .real(let v): .float8(v)
        case .text(let v): .text(v)
        case .blob(let v): .bytea(v)
        }
    }
}
