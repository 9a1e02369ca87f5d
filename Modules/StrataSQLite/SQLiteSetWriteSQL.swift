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

    /// `abs(-9223372036854775807 - 1)`: an expression that fails its statement with SQLite's
    /// "integer overflow" error (`abs` of `Int64.min`), for a value that must not be stored.
    static let failing = "abs(-9223372036854775807 - 1)"

    /// The update of a set write:
    /// `UPDATE t SET c = e, …, "version" = "version" + 1 WHERE (selection) AND (c IS NOT e OR …)`.
    ///
    /// The assignments' operands are `?1…?n` (SET and the change test share them); the filter's
    /// parameters follow. The keys of the rows it writes are collected by the connection's update
    /// hook (``SQLiteConnection/beginCollectingRowids()``), not by `RETURNING`, which costs a
    /// trigger program and a table insert per row. An integer arithmetic result past `Int64`
    /// (SQLite yields a REAL, which an INTEGER column keeps as REAL) and a version past
    /// `Int64.max` fail the statement instead (``failing``); ``overflowProbe(_:selection:table:variableLimit:)``
    /// then finds the row.
    static func update(
        _ assignments: [SetWrite.ColumnAssignment], selection: SetWrite.Selection, table: SQLiteTableLayout,
        variableLimit: Int
    ) throws(StrataError) -> SQLiteQuery {
        let sets = assignments.enumerated().map { position, item in
            let value = expression(item, table: table, parameter: position + 1)
            let guarded =
                overflows(item, table: table)
                ? "CASE WHEN typeof(\(value)) = 'real' THEN \(failing) ELSE \(value) END" : value
            return "\(table.quotedColumns[item.column]) = \(guarded)"
        }
        let version = "\"version\" = CASE WHEN \"version\" < \(Int64.max) THEN \"version\" + 1 ELSE \(failing) END"
        var query = SQLiteQuery(
            sql: "UPDATE \(table.table) SET \((sets + [version]).joined(separator: ", "))",
            parameters: operands(assignments))
        try appendSelection(
            selection, of: table, to: &query, variableLimit: variableLimit,
            alsoRequiring: changes(assignments, table: table))
        return query
    }

    /// Whether an assignment is integer arithmetic, which can pass `Int64`.
    static func overflows(_ assignment: SetWrite.ColumnAssignment, table: SQLiteTableLayout) -> Bool {
        if case .value = assignment.assignment { return false }
        return table.storageClasses[assignment.column] == .integer
    }

    /// After an update failed: `SELECT "id", CASE WHEN typeof(e) = 'real' THEN c + 1 … WHEN
    /// "version" = Int64.max THEN -1 END FROM t WHERE (selection) AND (changes) AND (<that case>)
    /// LIMIT 1`, the first row whose arithmetic passes `Int64` (its column number + 1) or whose
    /// version cannot grow (-1); no row when the failure was another one.
    static func overflowProbe(
        _ assignments: [SetWrite.ColumnAssignment], selection: SetWrite.Selection, table: SQLiteTableLayout,
        variableLimit: Int
    ) throws(StrataError) -> SQLiteQuery {
        var cases: [String] = []
        for (position, item) in assignments.enumerated() where overflows(item, table: table) {
            let value = expression(item, table: table, parameter: position + 1)
            cases.append("WHEN typeof(\(value)) = 'real' THEN \(item.column + 1)")
        }
        cases.append("WHEN \"version\" = \(Int64.max) THEN -1")
        let check = "CASE \(cases.joined(separator: " ")) ELSE 0 END"
        // Every operand appears before the filter's parameters, which SQLite numbers after the
        // largest so far.
        let operands = assignments.indices.map { "?\($0 + 1)" }.joined(separator: ", ")
        var query = SQLiteQuery(
            sql: "SELECT \"id\", \(check), \(operands) FROM \(table.table)", parameters: Self.operands(assignments))
        try appendSelection(
            selection, of: table, to: &query, variableLimit: variableLimit,
            alsoRequiring: changes(assignments, table: table) + " AND (\(check)) <> 0")
        query.sql += " LIMIT 1"
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

    /// `DELETE FROM t WHERE (selection)`, with `RETURNING "id", <tombstone columns>` when there
    /// are tombstone columns (otherwise the update hook collects the keys: never a `DELETE`
    /// without `WHERE`, for which SQLite reports no row); with `keptAs`, the rows are those whose
    /// keys step `keptAs` kept (``keepKeys(ofStep:selection:table:variableLimit:)``).
    static func delete(
        selection: SetWrite.Selection, tombstoneColumns: [Int], table: SQLiteTableLayout, keptAs step: Int?,
        variableLimit: Int
    ) throws(StrataError) -> SQLiteQuery {
        var query = SQLiteQuery(sql: "DELETE FROM \(table.table)", parameters: [])
        if let step {
            query.sql += " WHERE \"id\" IN (\(keys(ofStep: step)))"
        } else if case .matching(nil) = selection {
            query.sql += " WHERE 1"
        } else {
            try appendSelection(selection, of: table, to: &query, variableLimit: variableLimit)
        }
        if !tombstoneColumns.isEmpty {
            let returned = ["\"id\""] + tombstoneColumns.map { table.quotedColumns[$0] }
            query.sql += " RETURNING " + returned.joined(separator: ", ")
        }
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

    /// The upsert of `rows` rows: `INSERT INTO t ("id", "version", c…) VALUES (?1, 1, ?2…), …
    /// ON CONFLICT (<unique columns>) DO UPDATE SET c = excluded.c, …, "version" = "version" + 1
    /// WHERE (c IS NOT excluded.c OR …)` (`DO NOTHING` when no column is updated); row `r` binds
    /// its key at `r × (columns + 1) + 1` and its values after it. SQLite writes the rows in order;
    /// the update hook tells what each did: its own key written when it was inserted, the stored
    /// row's when it updated that, no key when it was ignored.
    static func upsert(_ upsert: SetWrite.Upsert, table: SQLiteTableLayout, rows: Int = 1) -> String {
        let width = table.quotedColumns.count + 1
        let tuples = (0..<rows).map { row in
            let key = "?\(row * width + 1)"
            let values = (1..<width).map { "?\(row * width + $0 + 1)" }
            return "(" + ([key, "1"] + values).joined(separator: ", ") + ")"
        }
        let placeholders = tuples.joined(separator: ", ")
        let target = upsert.uniqueColumns.map { table.quotedColumns[$0] }.joined(separator: ", ")
        var sql =
            "INSERT INTO \(table.table) (\(table.selectList)) VALUES \(placeholders)"
            + " ON CONFLICT (\(target)) DO "
        if case .update(let columns) = upsert.onClash, !columns.isEmpty {
            let names = columns.map { table.quotedColumns[$0] }
            let sets = names.map { "\($0) = excluded.\($0)" } + ["\"version\" = \"version\" + 1"]
            let differs = names.map { "\($0) IS NOT excluded.\($0)" }.joined(separator: " OR ")
            sql += "UPDATE SET \(sets.joined(separator: ", ")) WHERE (\(differs))"
        } else {
            sql += "NOTHING"
        }
        return sql
    }
}
