import StrataStorage

/// Runs a change set's set writes (``SetWrite``) inside the commit's open write transaction, in
/// list order, after its row writes and links: one statement per update, delete or deny (SQL in
/// ``SQLiteSetWriteSQL``), one prepared `INSERT … ON CONFLICT` per upsert row. The caller
/// commits, or rolls back when ``run(_:)`` throws.
///
/// A delete whose keys a later step selects by (or whose entity has join tables) first keeps the
/// keys it is about to remove in the temporary table ``SQLiteSetWriteSQL/keysTable``, filled by
/// one `INSERT … SELECT`; ``run(_:)`` empties it when done, whether it succeeded or not.
struct SQLiteSetWriter<Layouts: SQLiteLayoutSource> {
    let layouts: Layouts
    let connection: SQLiteConnection

    /// Runs `writes` (checked against the schema by ``ChangeSet/checkSetWrites(against:)``) and
    /// returns one result per write.
    /// - Throws: `.validation` from a deny step or an integer overflow; `.constraintViolation`
    ///   naming the unique index an update or upsert clashes with; `.storeFull` for a version
    ///   past `Int64.max`; `.misuse` for a value that does not fit its column; SQLite's errors.
    func run(_ writes: [SetWrite]) throws(StrataError) -> [SetWriteResult] {
        var selectedBy = Set<Int>()
        for write in writes {
            if case .referencing(_, let step) = write.selection { selectedBy.insert(step) }
        }
        var keysTableUsed = false
        defer {
            // Rows of a rolled-back transaction go with it, but the table outlives it: emptied
            // here in every case (a table made in a rolled-back transaction is gone: no error kept).
            if keysTableUsed { try? connection.execute(SQLiteSetWriteSQL.clearKeysTable) }
        }
        var results: [SetWriteResult] = []
        results.reserveCapacity(writes.count)
        for (step, write) in writes.enumerated() {
            let table = try layouts.table(write.entity)
            switch write.action {
            case .update(let assignments):
                results.append(try update(assignments, selection: write.selection, table: table))
            case .delete(let tombstoneColumns):
                let joined = layouts.joins.contains {
                    $0.join.leftEntity == write.entity || $0.join.rightEntity == write.entity
                }
                let keep = selectedBy.contains(step) || joined
                if keep && !keysTableUsed {
                    try connection.execute(SQLiteSetWriteSQL.createKeysTable)
                    keysTableUsed = true
                }
                results.append(
                    try delete(
                        write.selection, tombstoneColumns: tombstoneColumns, table: table, keptAs: keep ? step : nil))
            case .deny(let denial):
                try deny(write.selection, denial: denial, table: table)
                results.append(SetWriteResult())
            case .upsert(let upsert):
                results.append(try self.upsert(upsert, table: table))
            }
        }
        return results
    }

    // MARK: Update

    private func update(
        _ assignments: [SetWrite.ColumnAssignment], selection: SetWrite.Selection, table: SQLiteTableLayout
    ) throws(StrataError) -> SetWriteResult {
        guard !assignments.isEmpty else { return SetWriteResult() }
        let limit = connection.variableLimit
        let query = try SQLiteSetWriteSQL.update(assignments, selection: selection, table: table, variableLimit: limit)
        do throws(StrataError) {
            let keys = try collectingRowids { () throws(StrataError) in
                try run(query) { (statement) throws(StrataError) in _ = try statement.step() }
            }
            return SetWriteResult(keys: keys)
        } catch .constraintViolation(_, _, let native) {
            let index = try clashingIndex(of: assignments, selection: selection, table: table)
            let attributes = index?.columns.map { table.entity.columns[$0].name } ?? []
            throw .constraintViolation(entity: table.entity.name, attributes: attributes, native: native)
        } catch {
            // An arithmetic result past Int64 or a version past Int64.max fails the statement
            // (SQLiteSetWriteSQL.failing); the probe finds the row, if that was the failure.
            let probe = try SQLiteSetWriteSQL.overflowProbe(
                assignments, selection: selection, table: table, variableLimit: limit)
            let found = try run(probe) { (statement) throws(StrataError) in
                try statement.step() ? (key: statement.int64(at: 0), check: statement.int64(at: 1)) : nil
            }
            if let found { throw overflow(found.check, key: found.key, table: table) }
            throw error
        }
    }

    /// The error of an overflow probe's check
    /// (see ``SQLiteSetWriteSQL/overflowProbe(_:selection:table:variableLimit:)``).
    private func overflow(_ check: Int64, key: Int64, table: SQLiteTableLayout) -> StrataError {
        guard check > 0, check <= table.entity.columns.count else {
            return .storeFull(
                """
                \(table.entity.name) row \(key) has reached the highest version, \(Int64.max), and cannot be \
                updated; copy its values into a new row
                """
            )
        }
        return SetWrite.overflow(
            entityName: table.entity.name, column: table.entity.columns[Int(check) - 1].name, key: key,
            storeIdentifier: layouts.storeIdentifier)
    }

    // MARK: Delete

    /// Deletes the selected rows and the join rows naming them. With `keptAs`, their keys are
    /// kept first under that step number (for later steps, and for the join rows).
    private func delete(
        _ selection: SetWrite.Selection, tombstoneColumns: [Int], table: SQLiteTableLayout, keptAs step: Int?
    ) throws(StrataError) -> SetWriteResult {
        let limit = connection.variableLimit
        if let step {
            let keep = try SQLiteSetWriteSQL.keepKeys(
                ofStep: step, selection: selection, table: table, variableLimit: limit)
            try run(keep) { (statement) throws(StrataError) in _ = try statement.step() }
        }
        let query = try SQLiteSetWriteSQL.delete(
            selection: selection, tombstoneColumns: tombstoneColumns, table: table, keptAs: step, variableLimit: limit)
        var keys: [Int64] = []
        var tombstones: [[StoredValue]] = []
        if tombstoneColumns.isEmpty {
            keys = try collectingRowids { () throws(StrataError) in
                try run(query) { (statement) throws(StrataError) in _ = try statement.step() }
            }
            tombstones = Array(repeating: [], count: keys.count)
        } else {
            try run(query) { (statement) throws(StrataError) in
                while try statement.step() {
                    let key = statement.int64(at: 0)
                    keys.append(key)
                    var values: [StoredValue] = []
                    values.reserveCapacity(tombstoneColumns.count)
                    for (position, column) in tombstoneColumns.enumerated() {
                        let decoding = table.decoding[column]
                        values.append(
                            try statement.value(
                                at: Int32(position + 1), as: decoding.storageClass, isBool: decoding.isBool
                            ) { "\(table.entity.name).\(table.entity.columns[column].name) of row \(key)" })
                    }
                    tombstones.append(values)
                }
            }
        }
        if let step {
            for join in layouts.joins {
                if join.join.leftEntity == table.entity.number {
                    try connection.statement(SQLiteSetWriteSQL.deleteLinks(of: join, side: "left", step: step)).run()
                }
                if join.join.rightEntity == table.entity.number {
                    try connection.statement(SQLiteSetWriteSQL.deleteLinks(of: join, side: "right", step: step)).run()
                }
            }
        }
        return SetWriteResult(keys: keys, tombstones: tombstones)
    }

    // MARK: Deny

    private func deny(
        _ selection: SetWrite.Selection, denial: SetWrite.DeleteDenial, table: SQLiteTableLayout
    ) throws(StrataError) {
        let query = try SQLiteSetWriteSQL.deny(
            selection: selection, table: table, variableLimit: connection.variableLimit)
        var holders = Set<Int64>()
        var count = 0
        try run(query) { (statement) throws(StrataError) in
            while try statement.step() {
                holders.insert(statement.int64(at: 0))
                count += 1
            }
        }
        if count > 0 {
            throw denial.error(
                holders: Array(holders), relatedCount: count, storeIdentifier: layouts.storeIdentifier)
        }
    }

    // MARK: Running

    /// Runs `body` and returns the rowids of the rows it wrote, in write order (the connection's
    /// update hook, see ``SQLiteConnection/beginCollectingRowids()``); the hook is off again
    /// when this returns or throws.
    func collectingRowids(_ body: () throws(StrataError) -> Void) throws(StrataError) -> [Int64] {
        connection.beginCollectingRowids()
        do throws(StrataError) {
            try body()
        } catch {
            _ = try? connection.endCollectingRowids()
            throw error
        }
        return try connection.endCollectingRowids()
    }

    /// Loads `query`'s membership lists, prepares (or finds cached) and binds it, and hands the
    /// statement to `body`; resets the statement and empties the lists afterwards, also on errors.
    func run<T>(
        _ query: SQLiteQuery, _ body: (SQLiteStatement) throws(StrataError) -> T
    ) throws(StrataError) -> T {
        // The lists first: the statement reads their table, which must exist when it is prepared.
        defer { if !query.membershipLists.isEmpty { connection.clearMembershipLists() } }
        try connection.loadMembershipLists(query.membershipLists)
        let statement = try connection.statement(query.sql)
        defer { statement.reset() }
        for (offset, value) in query.parameters.enumerated() { try statement.bind(value, at: Int32(offset + 1)) }
        return try body(statement)
    }
}
