import StrataStorage

/// The SQL text of set writes (``SetWrite``): one statement per update, delete or deny, one
/// prepared `INSERT … ON CONFLICT` for an upsert's rows. Built apart from running them (see
/// ``SQLiteSetWriter``), so the statements stay plain SQL that one can read and test.
///
/// Rows are selected by the same filter translation as reads (``SQLiteQuery/appendWhere``), or,
/// for ``SetWrite/Selection/referencing(column:deletedBy:)``, by the keys an earlier delete kept
/// in the connection's temporary table ``keysTable`` (`step`, `key`).
enum SQLiteSetWriteSQL {
    /// The temporary table of the keys that delete steps removed, for the steps that select by them.
    static let keysTable = "temp.strata_set_keys"
    /// Creates ``keysTable`` on the connection when missing. Keyed by step then key, so a
    /// selection by one step's keys walks them in order.
    static let createKeysTable = """
        CREATE TEMP TABLE IF NOT EXISTS strata_set_keys ("step" INTEGER NOT NULL, "key" INTEGER NOT NULL, \
        PRIMARY KEY ("step", "key")) WITHOUT ROWID
        """
    /// Empties ``keysTable`` (SQLite's truncate path: no row is visited).
    static let clearKeysTable = "DELETE FROM \(keysTable)"

    /// `SELECT "key" FROM keysTable WHERE "step" = n`: the keys delete step `step` removed. The
    /// step number is part of the statement's shape, not a value: it stays in the SQL.
    static func keys(ofStep step: Int) -> String {
        "SELECT \"key\" FROM \(keysTable) WHERE \"step\" = \(step)"
    }

    /// Appends ` WHERE <selection>` to `query` (nothing for every row); with `alsoRequiring`, the
    /// condition is added with AND (or alone when the selection is every row).
    static func appendSelection(
        _ selection: SetWrite.Selection, of table: SQLiteTableLayout, to query: inout SQLiteQuery,
        variableLimit: Int, alsoRequiring condition: String? = nil
    ) throws(StrataError) {
        switch selection {
        case .matching(let filter?):
            try query.appendWhere(filter, entity: table.entity, variableLimit: variableLimit)
            if let condition { query.sql += " AND \(condition)" }
        case .matching(nil):
            if let condition { query.sql += " WHERE \(condition)" }
        case .referencing(let column, let step):
            query.sql += " WHERE \(table.quotedColumns[column]) IN (\(keys(ofStep: step)))"
            if let condition { query.sql += " AND \(condition)" }
        }
    }

    /// The new value of an assigned column: `?n` for a constant, `("c" + ?n)` or `("c" * ?n)`.
    static func expression(_ assignment: SetWrite.ColumnAssignment, table: SQLiteTableLayout, parameter: Int) -> String
    {
        let column = table.quotedColumns[assignment.column]
        switch assignment.assignment {
        case .value: return "?\(parameter)"
        case .add: return "(\(column) + ?\(parameter))"
        case .multiply: return "(\(column) * ?\(parameter))"
        }
    }

    /// The operand each assignment binds, in assignment order (`?1`, `?2`, …).
    static func operands(_ assignments: [SetWrite.ColumnAssignment]) -> [StoredValue] {
        assignments.map {
            switch $0.assignment {
            case .value(let value), .add(let value), .multiply(let value): value
            }
        }
    }

    /// `("c1" IS NOT e1 OR …)`: whether an assignment changes the row (rows it would leave as
    /// they are are neither written nor listed).
    static func changes(_ assignments: [SetWrite.ColumnAssignment], table: SQLiteTableLayout) -> String {
        let parts = assignments.enumerated().map { position, item in
            "\(table.quotedColumns[item.column]) IS NOT \(expression(item, table: table, parameter: position + 1))"
        }
        return "(" + parts.joined(separator: " OR ") + ")"
    }

    /// The update of a set write:
    /// `UPDATE t SET c = e, …, "version" = "version" + 1 WHERE (selection) AND (c IS NOT e OR …)
    /// RETURNING "id", <check>`.
    ///
    /// The assignments' operands are `?1…?n` (SET and the change test share them); the filter's
    /// parameters follow. The check column is 0 for a sound row, the number + 1 of the first
    /// integer column whose arithmetic passed `Int64` (SQLite then yields a REAL, which an INTEGER
    /// column keeps as REAL), or -1 when the version passed `Int64.max`.
    static func update(
        _ assignments: [SetWrite.ColumnAssignment], selection: SetWrite.Selection, table: SQLiteTableLayout,
        variableLimit: Int
    ) throws(StrataError) -> SQLiteQuery {
        let sets = assignments.enumerated().map { position, item in
            "\(table.quotedColumns[item.column]) = \(expression(item, table: table, parameter: position + 1))"
        }
        var query = SQLiteQuery(
            sql: "UPDATE \(table.table) SET \(sets.joined(separator: ", ")), \"version\" = \"version\" + 1",
            parameters: operands(assignments))
        try appendSelection(
            selection, of: table, to: &query, variableLimit: variableLimit,
            alsoRequiring: changes(assignments, table: table))
        var checks: [String] = []
        for item in assignments where table.storageClasses[item.column] == .integer {
            if case .value = item.assignment { continue }
            checks.append("WHEN typeof(\(table.quotedColumns[item.column])) = 'real' THEN \(item.column + 1)")
        }
        checks.append("WHEN typeof(\"version\") = 'real' THEN -1")
        query.sql += " RETURNING \"id\", CASE \(checks.joined(separator: " ")) ELSE 0 END"
        return query
    }

    /// `INSERT INTO keysTable ("step", "key") SELECT step, "id" FROM t WHERE (selection)`: keeps
    /// the keys a delete step is about to remove, for the steps that select by them.
    static func keepKeys(
        ofStep step: Int, selection: SetWrite.Selection, table: SQLiteTableLayout, variableLimit: Int
    ) throws(StrataError) -> SQLiteQuery {
        var query = SQLiteQuery(
            sql: "INSERT INTO \(keysTable) (\"step\", \"key\") SELECT \(step), \"id\" FROM \(table.table)",
            parameters: [])
        try appendSelection(selection, of: table, to: &query, variableLimit: variableLimit)
        return query
    }

    /// `DELETE FROM t WHERE (selection) RETURNING "id", <tombstone columns>`; with `keptAs`, the
    /// rows are those whose keys step `keptAs` kept (``keepKeys(ofStep:selection:table:variableLimit:)``).
    static func delete(
        selection: SetWrite.Selection, tombstoneColumns: [Int], table: SQLiteTableLayout, keptAs step: Int?,
        variableLimit: Int
    ) throws(StrataError) -> SQLiteQuery {
        var query = SQLiteQuery(sql: "DELETE FROM \(table.table)", parameters: [])
        if let step {
            query.sql += " WHERE \"id\" IN (\(keys(ofStep: step)))"
        } else {
            try appendSelection(selection, of: table, to: &query, variableLimit: variableLimit)
        }
        let returned = ["\"id\""] + tombstoneColumns.map { table.quotedColumns[$0] }
        query.sql += " RETURNING " + returned.joined(separator: ", ")
        return query
    }

    /// The join rows naming a key that delete step `step` removed, on the join's `side` column.
    static func deleteLinks(of join: SQLiteJoinLayout, side: String, step: Int) -> String {
        "DELETE FROM \(join.table) WHERE \"\(side)\" IN (\(keys(ofStep: step)))"
    }

    /// `SELECT <column or "id"> FROM t WHERE (selection)`: the holders a deny step names.
    static func deny(
        selection: SetWrite.Selection, table: SQLiteTableLayout, variableLimit: Int
    ) throws(StrataError) -> SQLiteQuery {
        let holder: String
        if case .referencing(let column, _) = selection {
            holder = table.quotedColumns[column]
        } else {
            holder = "\"id\""
        }
        var query = SQLiteQuery(sql: "SELECT \(holder) FROM \(table.table)", parameters: [])
        try appendSelection(selection, of: table, to: &query, variableLimit: variableLimit)
        return query
    }

    /// The upsert of one row: `INSERT INTO t ("id", "version", c…) VALUES (?1, 1, ?2…)
    /// ON CONFLICT (<unique columns>) DO UPDATE SET c = excluded.c, …, "version" = "version" + 1
    /// WHERE (c IS NOT excluded.c OR …) RETURNING "id"` (`DO NOTHING` when no column is updated).
    /// The returned key is the row's own when it was inserted, the stored row's when it updated
    /// that; no row returned means the row was ignored.
    static func upsert(_ upsert: SetWrite.Upsert, table: SQLiteTableLayout) -> String {
        let placeholders = (0..<(table.quotedColumns.count)).map { "?\($0 + 2)" }.joined(separator: ", ")
        let target = upsert.uniqueColumns.map { table.quotedColumns[$0] }.joined(separator: ", ")
        var sql =
            "INSERT INTO \(table.table) (\(table.selectList)) VALUES (?1, 1, \(placeholders))"
            + " ON CONFLICT (\(target)) DO "
        if case .update(let columns) = upsert.onClash, !columns.isEmpty {
            let names = columns.map { table.quotedColumns[$0] }
            let sets = names.map { "\($0) = excluded.\($0)" } + ["\"version\" = \"version\" + 1"]
            let differs = names.map { "\($0) IS NOT excluded.\($0)" }.joined(separator: " OR ")
            sql += "UPDATE SET \(sets.joined(separator: ", ")) WHERE (\(differs))"
        } else {
            sql += "NOTHING"
        }
        return sql + " RETURNING \"id\""
    }
}
