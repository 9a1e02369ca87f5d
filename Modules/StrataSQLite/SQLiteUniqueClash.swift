import StrataStorage

extension SQLiteConnection {
    /// The unique index of `table`'s entity whose values `row` clashes with, read from the schema.
    ///
    /// Runs only after SQLite refused a write with `SQLITE_CONSTRAINT_UNIQUE`, inside the same
    /// transaction: one query per unique index of the entity, in schema order, until one finds
    /// another row holding the same values. SQLite's message text is never read. An index where
    /// the row has a null never clashes (SQLite's unique indexes let nulls repeat).
    /// - Parameter skipping: the columns of a unique index not to look at (an upsert's own, whose
    ///   clashes it resolves).
    /// - Returns: the clashing index, or nil when none is found (the caller still reports the
    ///   entity and keeps SQLite's code and message as the cause).
    /// - Throws: what a query throws (`.busy`, `.io`, …).
    func clashingUniqueIndex(
        of table: SQLiteTableLayout, for row: RowWrite, skipping: [Int]? = nil
    ) throws(StrataError) -> IndexSchema? {
        let entity = table.entity
        for index in entity.indexes where index.isUnique && index.columns != skipping {
            var conditions: [String] = []
            var parameters: [StoredValue] = []
            for column in index.columns {
                var value = row.values[column]
                if value.isNull { break }
                // Bound as the write binds it (an integer into a REAL column is a double).
                if table.storageClasses[column] == .real, case .integer(let integer) = value {
                    value = .real(Double(integer))
                }
                parameters.append(value)
                conditions.append("\(quoted(entity.columns[column].name)) = ?\(parameters.count)")
            }
            guard parameters.count == index.columns.count else { continue }
            parameters.append(.integer(row.key))
            conditions.append("\"id\" <> ?\(parameters.count)")
            let sql = "SELECT 1 FROM \(table.table) WHERE \(conditions.joined(separator: " AND ")) LIMIT 1"
            if try queryInt64(sql, parameters) != nil { return index }
        }
        return nil
    }
}
