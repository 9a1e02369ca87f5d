import StrataStorage

/// A set write's update: one `UPDATE … SET c = <expr>, …, version = version + 1 WHERE
/// (<selection>) AND (c IS DISTINCT FROM <expr> OR …) RETURNING id`, so a row whose values would
/// not change is neither written nor listed.
///
/// The server computes the arithmetic. Past `Int64` it raises SQLSTATE 22003 (so does a real
/// result it cannot hold, from finite values). An update with arithmetic therefore runs under a
/// savepoint: on 22003 the statement is rolled back and one offending row found with a `SELECT`
/// (exact, in `numeric`), for ``SetWrite/overflow(entityName:column:key:storeIdentifier:)``.
extension PostgresEngine {
    /// The savepoint around an update with arithmetic.
    private static let setUpdateSavepoint = "strata_set_update"

    /// Runs an update over the rows `selection` picks and returns the keys it wrote.
    func runUpdate(
        _ assignments: [SetWrite.ColumnAssignment], selection: PostgresSetSelection, table: PostgresTableLayout,
        changes: ChangeSet, session: PostgresSession
    ) throws(StrataError) -> SetWriteResult {
        guard !assignments.isEmpty else { return SetWriteResult() }
        var parameters = selection.parameters
        var sets: [String] = []
        var differs: [String] = []
        var arithmetic = false
        for item in assignments {
            let name = pgQuoted(table.entity.columns[item.column].name)
            let storageClass = table.storageClasses[item.column]
            let expression: String
            switch item.assignment {
            case .value(let value):
                parameters.append(Self.parameter(value, storageClass: storageClass))
                expression = "$\(parameters.count)"
            case .add(let operand):
                parameters.append(Self.parameter(operand, storageClass: storageClass))
                expression = "(\(name) + $\(parameters.count))"
                arithmetic = true
            case .multiply(let operand):
                parameters.append(Self.parameter(operand, storageClass: storageClass))
                expression = "(\(name) * $\(parameters.count))"
                arithmetic = true
            }
            sets.append("\(name) = \(expression)")
            differs.append("\(name) IS DISTINCT FROM \(expression)")
        }
        sets.append("\"version\" = \"version\" + 1")
        let sql = """
            UPDATE \(table.table) SET \(sets.joined(separator: ", ")) WHERE (\(selection.sql)) AND \
            (\(differs.joined(separator: " OR "))) RETURNING "id"
            """
        guard arithmetic else {
            let result = try runSetStatement(sql, parameters, table: table, changes: changes, session: session)
            return SetWriteResult(keys: try returnedKeys(result, table: table))
        }
        try session.run("SAVEPOINT \(Self.setUpdateSavepoint)")
        let result: PGResult
        do throws(PGFailure) {
            result = try session.runRaw(sql, parameters)
        } catch {
            guard error.sqlState == "22003" else { throw try translate(error, changes: changes, session: session) }
            try session.run("ROLLBACK TO SAVEPOINT \(Self.setUpdateSavepoint)")
            throw try outOfRange(assignments, selection: selection, table: table, failure: error, session: session)
        }
        try session.run("RELEASE SAVEPOINT \(Self.setUpdateSavepoint)")
        return SetWriteResult(keys: try returnedKeys(result, table: table))
    }

    /// The error of an update the server found out of range (22003), with the statement rolled
    /// back: the lowest key whose integer arithmetic passes `Int64` (computed in `numeric`), named
    /// with its column; else a row at the highest version; else a real result the server refuses.
    private func outOfRange(
        _ assignments: [SetWrite.ColumnAssignment], selection: PostgresSetSelection, table: PostgresTableLayout,
        failure: PGFailure, session: PostgresSession
    ) throws(StrataError) -> StrataError {
        var parameters = selection.parameters
        var cases: [String] = []
        var conditions: [String] = []
        var columns: [Int] = []
        for item in assignments where table.storageClasses[item.column] == .integer {
            let operation: String
            switch item.assignment {
            case .add(let operand), .multiply(let operand):
                parameters.append(Self.parameter(operand, storageClass: .integer))
                if case .add = item.assignment { operation = "+" } else { operation = "*" }
            case .value: continue
            }
            let name = pgQuoted(table.entity.columns[item.column].name)
            let condition = """
                (\(name)::numeric \(operation) $\(parameters.count)::numeric) NOT BETWEEN \(Int64.min) AND \(Int64.max)
                """
            cases.append("WHEN \(condition) THEN \(columns.count)")
            conditions.append(condition)
            columns.append(item.column)
        }
        conditions.append("\"version\" = \(Int64.max)")
        let which = cases.isEmpty ? "-1" : "CASE \(cases.joined(separator: " ")) ELSE -1 END"
        let found = try session.run(
            """
            SELECT "id", (\(which))::int8 FROM \(table.table) WHERE (\(selection.sql)) AND \
            (\(conditions.joined(separator: " OR "))) ORDER BY "id" LIMIT 1
            """, parameters)
        let native = PostgresError.native(failure, sql: nil, operation: "committing", redacting: pool.settings.secret)
        if found.rowCount > 0, let key = found.int64(0, 0), let index = found.int64(0, 1) {
            guard index >= 0, Int(index) < columns.count else {
                return .storeFull(
                    """
                    \(location): \(table.entity.name) row \(key) has reached the highest version, \(Int64.max), and \
                    cannot be updated; nothing was written. Copy its values into a new row
                    """, native: native)
            }
            return SetWrite.overflow(
                entityName: table.entity.name, column: table.entity.columns[columns[Int(index)]].name, key: key,
                storeIdentifier: storeIdentifier)
        }
        let reals = assignments.filter { table.storageClasses[$0.column] == .real }
        return .validation([
            ValidationIssue(
                entity: table.entity.name,
                property: reals.map { table.entity.columns[$0.column].name }.joined(separator: ", "),
                message: """
                    the batch update's arithmetic gives a real number PostgreSQL does not store \
                    (\(failure.message)): a finite value past ±1.8e308, or a product of non-zero values too small \
                    for a double; nothing was written
                    """)
        ])
    }
}
