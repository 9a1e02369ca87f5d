import StrataStorage

extension SQLiteSetWriter {
    /// Inserts each row with its key, or updates (or leaves) the stored row holding its unique
    /// values: one prepared `INSERT … ON CONFLICT … RETURNING "id"` run per row
    /// (``SQLiteSetWriteSQL/upsert(_:table:)``). A returned key equal to the row's own is an
    /// insert, another key the stored row it updated; no row returned, an ignored row.
    /// - Throws: `.misuse` for a key that is not positive or a value its column cannot hold;
    ///   `.constraintViolation` naming another unique index the row clashes with; SQLite's errors.
    func upsert(_ upsert: SetWrite.Upsert, table: SQLiteTableLayout) throws(StrataError) -> SetWriteResult {
        var result = SetWriteResult()
        guard !upsert.rows.isEmpty else { return result }
        let statement = try connection.statement(SQLiteSetWriteSQL.upsert(upsert, table: table))
        defer { statement.reset() }
        let classes = table.storageClasses
        for (row, key) in zip(upsert.rows, upsert.keys) {
            guard key > 0 else { throw .misuse("\(table.entity.name) primary keys must be positive, got \(key)") }
            try statement.checkBound(statement.bindReturningCode(key, at: 1))
            for column in classes.indices {
                let value = row[column]
                let index = Int32(column + 2)
                if classes[column].admits(value) {
                    try statement.checkBound(statement.bindReturningCode(value, at: index))
                } else if classes[column] == .real, case .integer(let integer) = value {
                    try statement.checkBound(statement.bindReturningCode(.real(Double(integer)), at: index))
                } else {
                    throw .misuse(
                        """
                        \(table.entity.name).\(table.entity.columns[column].name) stores \
                        \(classes[column].rawValue) values, got \(value)
                        """
                    )
                }
            }
            let returned: Int64?
            do throws(StrataError) {
                returned = try statement.step() ? statement.int64(at: 0) : nil
            } catch .constraintViolation(_, _, let native) {
                let write = RowWrite(entity: table.entity.number, key: key, expectedVersion: 0, values: row)
                let index = try connection.clashingUniqueIndex(of: table, for: write, skipping: upsert.uniqueColumns)
                let attributes = index?.columns.map { table.entity.columns[$0].name } ?? []
                throw .constraintViolation(entity: table.entity.name, attributes: attributes, native: native)
            }
            // Every parameter is bound again for the next row.
            statement.rewind()
            switch returned {
            case key?: result.insertedKeys.append(key)
            case let stored?: result.keys.append(stored)
            case nil: result.ignoredCount += 1
            }
        }
        return result
    }
}
