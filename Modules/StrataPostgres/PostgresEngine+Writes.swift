import StrataStorage

/// The writes of a commit, set-wise: per entity (or join) and per batch of ``insertBatchSize``
/// rows, one statement whose parameters are binary arrays (`unnest($1, $2, …)`), so a change set
/// of 100,000 updates or deletes takes 50 statements instead of 100,000, sent up to eight to a
/// round trip (``run(_:session:)``).
///
/// They run after ``write(_:session:insertKeysReread:)`` has locked every row they touch (`FOR
/// UPDATE`) and compared its version, so each statement still matches every key at its expected version and
/// its affected count is checked all the same: a short count is a concurrent write the locks
/// missed, reported as SQLSTATE 40001 and listed as a conflict after the rollback.
extension PostgresEngine {
    /// The most rows one batched statement of a commit writes: inserts, updates, deletes,
    /// touches, links and unlinks alike.
    static let insertBatchSize = 2_000

    /// The savepoint around an entity's batched updates, rolled back to when they clash on a
    /// unique index (``updateRows(_:into:)``).
    private static let updateSavepoint = "strata_updates"

    /// The most statements of a commit's writes sent in one pipeline (one round trip).
    static let statementsPerPipeline = 8

    /// The most parameter bytes of one pipeline, unless its first statement alone has more: with
    /// ``statementsPerPipeline`` it bounds what a commit holds encoded at once (the statements
    /// being sent, which libpq copies into its output buffer too, and the next one's, made and
    /// kept for the next round trip) to about 4 MiB plus one batch.
    static let bytesPerPipeline = 4 << 20

    /// Deletes (and their links), unlinks, updates, touches, inserts, links — in the order of the
    /// embedded engines, so unique values can move between rows within one change set — as
    /// statements for ``run(_:session:)``.
    func writePlan(for changes: ChangeSet) -> PostgresWritePlan {
        var plan = PostgresWritePlan()
        checkRows(changes.deletes, statement: \.deleteBatch, verb: "deleted", into: &plan)
        var deleted: [Int: [Int64]] = [:]
        for delete in changes.deletes { deleted[delete.entity, default: []].append(delete.key) }
        for join in joins {
            if let keys = deleted[join.join.leftEntity] { plan.add(join.deleteLefts) { [Self.int8Array(keys)] } }
            if let keys = deleted[join.join.rightEntity] { plan.add(join.deleteRights) { [Self.int8Array(keys)] } }
        }
        writeLinks(changes.unlinks, statement: \.unlinkBatch, into: &plan)
        updateRows(changes.updates, into: &plan)
        checkRows(changes.touches, statement: \.touchBatch, verb: "touched", into: &plan)
        insertRows(changes.inserts, into: &plan)
        writeLinks(changes.links, statement: \.linkBatch, into: &plan)
        return plan
    }

    /// Runs `plan` on `session`, up to ``statementsPerPipeline`` statements (and about
    /// ``bytesPerPipeline`` bytes of parameters) a round trip, checking each statement's affected
    /// count.
    ///
    /// When a batch of an update group clashes on a unique index, the server skips the rest of
    /// that pipeline: the group is rolled back to its savepoint, its rows are updated one by one,
    /// and the steps after the group go in the next pipeline.
    /// - Throws: the first failure, as the server reported it, its ``PGFailure/pipelineIndex`` the
    ///   index of the failing step in `plan`; SQLSTATE 40001 for a short count.
    func run(_ plan: PostgresWritePlan, session: PostgresSession) throws(PGFailure) {
        var start = 0
        var carried: (index: Int, parameters: [PGParameter])?
        while start < plan.steps.count {
            var statements = Self.nextPipeline(plan, from: start, carried: &carried)
            let end = start + statements.count
            var (results, failure) = session.runPipelineRaw(statements)
            statements = []
            if let index = failure?.pipelineIndex { failure?.pipelineIndex = start + index }
            let failedGroup = failure?.pipelineIndex.flatMap { plan.steps[$0].group }
            for (offset, result) in results.enumerated() {
                let step = plan.steps[start + offset]
                // A batch of the group that clashed is rolled back with it, then redone row by row.
                guard let expected = step.expectedRows, failedGroup == nil || step.group != failedGroup else {
                    continue
                }
                try Self.checkAffected(result, expected, entity: step.entity, verb: step.verb)
            }
            guard let failure else {
                start = end
                continue
            }
            guard failure.sqlState == "23505", !failure.connectionBroken, let failedGroup else { throw failure }
            let group = plan.groups[failedGroup]
            try session.runRaw("ROLLBACK TO SAVEPOINT \(Self.updateSavepoint)")
            for row in group.rows { try updateRow(row, table: group.table, session: session) }
            try session.runRaw("RELEASE SAVEPOINT \(Self.updateSavepoint)")
            start = group.release + 1
        }
    }

    /// The statements of the next round trip from step `start`: up to ``statementsPerPipeline``,
    /// with at most ``bytesPerPipeline`` bytes of parameters unless the first alone has more. The
    /// statement that would pass the budget is left in `carried`, its parameters made, for the
    /// next round trip (which drops it when a fallback moved past it).
    private static func nextPipeline(
        _ plan: PostgresWritePlan, from start: Int, carried: inout (index: Int, parameters: [PGParameter])?
    ) -> [PGConnection.PipelinedStatement] {
        var statements: [PGConnection.PipelinedStatement] = []
        var bytes = 0
        while start + statements.count < plan.steps.count, statements.count < statementsPerPipeline {
            let index = start + statements.count
            let step = plan.steps[index]
            let parameters = if let carried, carried.index == index { carried.parameters } else { step.parameters() }
            carried = nil
            let size = parameters.reduce(0) { $0 + $1.approximateByteCount }
            if !statements.isEmpty && bytes + size > bytesPerPipeline {
                carried = (index, parameters)
                break
            }
            bytes += size
            statements.append(PGConnection.PipelinedStatement(sql: step.sql, parameters: parameters))
        }
        return statements
    }

    /// Deletes or touches rows (`statement` is ``PostgresTableLayout/deleteBatch`` or
    /// ``PostgresTableLayout/touchBatch``): keys and expected versions, batch by batch.
    private func checkRows(
        _ checks: [RowVersionCheck], statement: KeyPath<PostgresTableLayout, String>, verb: String,
        into plan: inout PostgresWritePlan
    ) {
        for (entity, rows) in Self.byNumber(checks, \.entity) {
            let table = tables[entity]
            Self.forEachBatch(rows) { batch in
                plan.add(table[keyPath: statement], expectedRows: batch.count, entity: table.entity.name, verb: verb) {
                    [Self.int8Array(batch.map(\.key)), Self.int8Array(batch.map(\.expectedVersion))]
                }
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
    /// change set's order (``run(_:session:)``), which then succeeds or fails exactly as before.
    /// (A swap of two values fails either way, on every engine.)
    private func updateRows(_ updates: [RowWrite], into plan: inout PostgresWritePlan) {
        for (entity, rows) in Self.byNumber(updates, \.entity) {
            let table = tables[entity]
            guard rows.count > 1, table.entity.indexes.contains(where: \.isUnique) else {
                updateBatches(rows, table: table, into: &plan)
                continue
            }
            plan.addUpdateGroup(savepoint: Self.updateSavepoint, table: table, rows: rows) { plan in
                updateBatches(rows, table: table, into: &plan)
            }
        }
    }

    /// One `UPDATE … FROM unnest(…)` per batch: keys, expected versions, one array per column.
    private func updateBatches(_ rows: [RowWrite], table: PostgresTableLayout, into plan: inout PostgresWritePlan) {
        Self.forEachBatch(rows) { batch in
            plan.add(table.updateBatch, expectedRows: batch.count, entity: table.entity.name, verb: "updated") {
                [Self.int8Array(batch.map(\.key)), Self.int8Array(batch.map(\.expectedVersion))]
                    + Self.columnArrays(batch, table: table)
            }
        }
    }

    /// One row's update (``PostgresTableLayout/update``): the fallback of an update group.
    private func updateRow(_ row: RowWrite, table: PostgresTableLayout, session: PostgresSession) throws(PGFailure) {
        var parameters: [PGParameter] = [.int8(row.key), .int8(row.expectedVersion + 1)]
        for (column, storageClass) in table.storageClasses.enumerated() {
            parameters.append(Self.parameter(row.values[column], storageClass: storageClass))
        }
        parameters.append(.int8(row.expectedVersion))
        let result = try session.runRaw(table.update, parameters)
        try Self.checkAffected(result, 1, entity: table.entity.name, verb: "updated")
    }

    /// Links or unlinks pairs (`statement` is ``PostgresJoinLayout/linkBatch`` or
    /// ``PostgresJoinLayout/unlinkBatch``), join by join, batch by batch. Both are idempotent, as
    /// they were row by row: a pair linked twice or unlinked while absent is no error.
    private func writeLinks(
        _ links: [JoinLink], statement: KeyPath<PostgresJoinLayout, String>, into plan: inout PostgresWritePlan
    ) {
        for (join, pairs) in Self.byNumber(links, \.join) {
            Self.forEachBatch(pairs) { batch in
                plan.add(joins[join][keyPath: statement]) {
                    [Self.int8Array(batch.map(\.leftKey)), Self.int8Array(batch.map(\.rightKey))]
                }
            }
        }
    }

    /// Inserts rows, entity by entity, in batches of ``insertBatchSize``: one
    /// `INSERT … SELECT … FROM unnest(…)` per batch, one binary array per column.
    ///
    /// A key already stored (a concurrent commit's, or a misused key; insert keys are not looked
    /// up first) or twice in this change set fails on the primary key: `translate` makes it a
    /// conflict, read after the rollback.
    private func insertRows(_ inserts: [RowWrite], into plan: inout PostgresWritePlan) {
        for (entity, rows) in Self.byNumber(inserts, \.entity) {
            let table = tables[entity]
            Self.forEachBatch(rows) { batch in
                plan.add(table.insertBatch) {
                    [Self.int8Array(batch.map(\.key))] + Self.columnArrays(batch, table: table)
                }
            }
        }
    }

    /// A short affected count: the rows were locked and checked, so a row not written is a
    /// concurrent write (or a key twice in the change set), listed once the transaction is
    /// rolled back (SQLSTATE 40001, as a taken insert key is listed).
    private static func checkAffected(
        _ result: PGResult, _ expected: Int, entity: String, verb: String
    ) throws(PGFailure) {
        guard result.affectedRows != expected else { return }
        throw PGFailure(
            sqlState: "40001",
            message: """
                \(expected - result.affectedRows) of \(expected) rows of \(entity) were not \(verb): \
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
    private static func forEachBatch<Item>(_ items: [Item], _ body: (ArraySlice<Item>) -> Void) {
        var start = 0
        while start < items.count {
            body(items[start..<min(start + insertBatchSize, items.count)])
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
