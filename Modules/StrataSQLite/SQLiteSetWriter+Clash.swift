import StrataStorage

extension SQLiteSetWriter {
    /// The unique index a set update clashed with, after SQLite refused it with
    /// `SQLITE_CONSTRAINT_UNIQUE` (the statement's writes are undone; the transaction goes on).
    ///
    /// Only the unique indexes over an assigned column can clash. With one, it is the one; with
    /// several, each is probed in schema order for a row whose new values would equal another
    /// row's in all its columns (a row it leaves alone, or another updated row), and the first
    /// with such a pair is named (the first candidate when none is found: SQLite checks row by
    /// row, so a clash with a value that a later row gives up still fails). SQLite's message text
    /// is never read.
    /// - Throws: what a query throws.
    func clashingIndex(
        of assignments: [SetWrite.ColumnAssignment], selection: SetWrite.Selection, table: SQLiteTableLayout
    ) throws(StrataError) -> IndexSchema? {
        let assigned = Set(assignments.map(\.column))
        let candidates = table.entity.indexes.filter { $0.isUnique && $0.columns.contains(where: assigned.contains) }
        guard candidates.count > 1 else { return candidates.first }
        for index in candidates {
            let query = try probe(index, assignments: assignments, selection: selection, table: table)
            let found = try run(query) { (statement) throws(StrataError) in try statement.step() }
            if found { return index }
        }
        return candidates.first
    }

    /// `WITH n AS (SELECT "id" AS k, ?1 AS p0, …, <new value> AS v0, … FROM t WHERE (selection) AND (changes))
    /// SELECT 1 FROM n WHERE <no v is null> AND (EXISTS <a row not in n with the same values> OR
    /// EXISTS <another row of n with the same values>) LIMIT 1`.
    private func probe(
        _ index: IndexSchema, assignments: [SetWrite.ColumnAssignment], selection: SetWrite.Selection,
        table: SQLiteTableLayout
    ) throws(StrataError) -> SQLiteQuery {
        let values = index.columns.enumerated().map { position, column in
            let value =
                assignments.firstIndex { $0.column == column }.map {
                    SQLiteSetWriteSQL.expression(assignments[$0], table: table, parameter: $0 + 1)
                } ?? table.quotedColumns[column]
            return "\(value) AS v\(position)"
        }
        // Every operand appears once before the filter's parameters, which SQLite numbers after
        // the largest so far (`?n+1`, …).
        let operands = assignments.indices.map { "?\($0 + 1) AS p\($0)" }
        var query = SQLiteQuery(
            sql: "WITH n AS (SELECT \"id\" AS k, \((operands + values).joined(separator: ", ")) FROM \(table.table)",
            parameters: SQLiteSetWriteSQL.operands(assignments))
        try SQLiteSetWriteSQL.appendSelection(
            selection, of: table, to: &query, variableLimit: connection.variableLimit,
            alsoRequiring: SQLiteSetWriteSQL.changes(assignments, table: table))
        let positions = index.columns.indices
        let present = positions.map { "n.v\($0) IS NOT NULL" }.joined(separator: " AND ")
        let stored = zip(positions, index.columns).map { "o.\(table.quotedColumns[$1]) = n.v\($0)" }
            .joined(separator: " AND ")
        let updated = positions.map { "m.v\($0) = n.v\($0)" }.joined(separator: " AND ")
        query.sql += """
            ) SELECT 1 FROM n WHERE \(present) AND (EXISTS (SELECT 1 FROM \(table.table) AS o WHERE \(stored) \
            AND o."id" NOT IN (SELECT k FROM n)) OR EXISTS (SELECT 1 FROM n AS m WHERE m.k <> n.k AND \(updated))) \
            LIMIT 1
            """
        return query
    }
}
