import StrataStorage

/// Set writes (``SetWrite``, issue 25) on PostgreSQL: each runs as one set-wise statement (or a
/// few) inside the commit's transaction, after the row writes and before the history append, so
/// no selected row travels to the client and back.
///
/// - Update: `UPDATE … SET c = <expr>, …, version = version + 1 WHERE (<selection>) AND
///   (c IS DISTINCT FROM <expr> OR …) RETURNING id` (`PostgresEngine+SetUpdate.swift`).
/// - Delete and deny: `DELETE … WHERE (<selection>) RETURNING id, <tombstone columns>`, then the
///   join rows naming those keys; a deny counts what it selects (`PostgresEngine+SetDelete.swift`).
/// - Upsert: `INSERT … SELECT … FROM unnest(…) ON CONFLICT (<unique columns>) DO UPDATE … WHERE
///   <a value differs> RETURNING id, version`, in chunks (`PostgresEngine+SetUpsert.swift`).
///
/// A selection is the filter's SQL (``PostgresFilterSQL``, as reads use), or `column = ANY($1)`
/// with the keys an earlier delete of the list returned. Where the filter's SQL selects a superset
/// (a `contains` needle starting with U+0000…U+0002), the candidates are read and checked with the
/// reference semantics first, and the write selects their keys.
extension PostgresEngine: SetWritingEngine {
    var acceptsSetWrites: Bool { true }

    func commitReturningResults(_ changes: ChangeSet) throws -> [SetWriteResult] {
        try changes.checkSetWrites(against: schema)
        if changes.isEmpty { return [] }
        try checkShape(changes)
        return try reportingSerializationFailures(changes) { () throws(StrataError) in
            try commitTransaction(changes)
        }
    }

    /// Runs the change set's set writes, in order, in the transaction open on `session`.
    func runSetWrites(_ changes: ChangeSet, session: PostgresSession) throws(StrataError) -> [SetWriteResult] {
        var results: [SetWriteResult] = []
        results.reserveCapacity(changes.setWrites.count)
        for write in changes.setWrites {
            let table = try table(write.entity)
            if case .upsert(let upsert) = write.action {
                results.append(try runUpsert(upsert, table: table, changes: changes, session: session))
                continue
            }
            guard let selection = try selection(of: write, table: table, results: results, session: session) else {
                results.append(SetWriteResult())
                continue
            }
            switch write.action {
            case .update(let assignments):
                results.append(
                    try runUpdate(assignments, selection: selection, table: table, changes: changes, session: session))
            case .delete(let tombstoneColumns):
                results.append(
                    try runDelete(
                        tombstoneColumns, selection: selection, table: table, changes: changes, session: session))
            case .deny(let denial):
                try runDeny(denial, write: write, selection: selection, table: table, session: session)
                results.append(SetWriteResult())
            case .upsert:
                continue
            }
        }
        return results
    }

    /// The SQL condition that selects a set write's rows, its parameters numbered from `$1`; nil
    /// when it selects none (an earlier delete removed no row, or no candidate matches).
    private func selection(
        of write: SetWrite, table: PostgresTableLayout, results: [SetWriteResult], session: PostgresSession
    ) throws(StrataError) -> PostgresSetSelection? {
        switch write.selection {
        case .matching(nil):
            return PostgresSetSelection(sql: "TRUE", parameters: [])
        case .matching(let filter?):
            let translated = try PostgresFilterSQL(filter, entity: table.entity)
            if translated.isExact {
                return PostgresSetSelection(sql: translated.sql, parameters: translated.parameters)
            }
            // The SQL selects a superset: keep the candidates the reference semantics match (locked
            // when they are to be written, so none changes before the write selects it by key).
            var read = "SELECT \(table.selectList) FROM \(table.table) WHERE \(translated.sql)"
            if case .deny = write.action {} else { read += " ORDER BY \"id\" FOR UPDATE" }
            let result = try session.run(read, translated.parameters)
            let decoder = try PostgresRowDecoder(result: result, table: table, store: location)
            var keys: [Int64] = []
            var row = StoredRow(key: 0, version: 0, values: [])
            for index in 0..<result.rowCount {
                try decoder.decode(index, into: &row)
                if filter.matches(row.values, key: row.key) { keys.append(row.key) }
            }
            guard !keys.isEmpty else { return nil }
            return PostgresSetSelection(sql: "\"id\" = ANY($1::int8[])", parameters: [Self.int8Array(keys)])
        case .referencing(let column, let step):
            let keys = results[step].keys
            guard !keys.isEmpty else { return nil }
            let name = pgQuoted(table.entity.columns[column].name)
            return PostgresSetSelection(sql: "\(name) = ANY($1::int8[])", parameters: [Self.int8Array(keys)])
        }
    }

    /// Runs one statement of a set write, translating a failure as a row write's is (a unique
    /// clash names its index; a deadlock becomes a conflict read after the rollback). SQLSTATE
    /// 22003 here is a row version at `Int64.max` (arithmetic runs under a savepoint and is
    /// diagnosed on its own); 21000 is an upsert naming one unique value twice.
    func runSetStatement(
        _ sql: String, _ parameters: [PGParameter], table: PostgresTableLayout, changes: ChangeSet,
        session: PostgresSession
    ) throws(StrataError) -> PGResult {
        do throws(PGFailure) {
            return try session.runRaw(sql, parameters)
        } catch {
            if error.sqlState == "22003" {
                throw .storeFull(
                    """
                    \(location): a row of \(table.entity.name) that a batch write selects has reached the highest \
                    version, \(Int64.max), and cannot be updated (\(error.message)); nothing was written. Copy its \
                    values into a new row
                    """,
                    native: PostgresError.native(
                        error, sql: nil, operation: "committing", redacting: pool.settings.secret))
            }
            if error.sqlState == "21000" {
                throw .misuse(
                    """
                    \(location): two rows of one upsert hold the same values in the unique columns of \
                    \(table.entity.name) (\(error.message)); nothing was written. Send each unique value once
                    """,
                    native: PostgresError.native(
                        error, sql: nil, operation: "committing", redacting: pool.settings.secret))
            }
            throw try translate(error, changes: changes, session: session)
        }
    }

    /// The keys in the first column of a set write's result.
    func returnedKeys(_ result: PGResult, table: PostgresTableLayout) throws(StrataError) -> [Int64] {
        var keys: [Int64] = []
        keys.reserveCapacity(result.rowCount)
        for row in 0..<result.rowCount {
            guard let key = result.int64(row, 0) else {
                throw .storeCorrupt("\(location): a row of \(table.entity.name) has a NULL or non-int8 id")
            }
            keys.append(key)
        }
        return keys
    }
}

/// The condition selecting a set write's rows (SQL over the entity's table), with its parameters.
struct PostgresSetSelection {
    /// A boolean SQL expression whose placeholders start at `$1`.
    var sql: String
    var parameters: [PGParameter]
}
