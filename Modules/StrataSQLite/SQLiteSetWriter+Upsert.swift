import StrataStorage

extension SQLiteSetWriter {
    /// Inserts each row with its key, or updates (or leaves) the stored row holding its unique
    /// values: one prepared `INSERT … ON CONFLICT` run per row
    /// (``SQLiteSetWriteSQL/upsert(_:table:)``). The update hook tells what it did: the row's own
    /// key written is an insert, another key the stored row it updated, none an ignored row.
    /// - Throws: `.misuse` for a key that is not positive or a value its column cannot hold;
    ///   `.constraintViolation` naming another unique index the row clashes with; SQLite's errors.
    func upsert(_ upsert: SetWrite.Upsert, table: SQLiteTableLayout) throws(StrataError) -> SetWriteResult {
        var result = SetWriteResult()
        guard !upsert.rows.isEmpty else { return result }
        let statement = try connection.statement(SQLiteSetWriteSQL.upsert(upsert, table: table))
        defer { statement.reset() }
        let classes = table.storageClasses
        _ = try collectingRowids { () throws(StrataError) in
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
                let before = connection.collectedRowidCount
                do throws(StrataError) {
                    _ = try statement.step()
                } catch .constraintViolation(_, _, let native) {
                    let write = RowWrite(entity: table.entity.number, key: key, expectedVersion: 0, values: row)
                    let index = try connection.clashingUniqueIndex(
                        of: table, for: write, skipping: upsert.uniqueColumns)
                    let attributes = index?.columns.map { table.entity.columns[$0].name } ?? []
                    throw .constraintViolation(entity: table.entity.name, attributes: attributes, native: native)
                }
                // Every parameter is bound again for the next row.
                statement.rewind()
                let written = connection.collectedRowidCount > before ? connection.collectedRowid(at: before) : nil
                switch written {
                case key?: result.insertedKeys.append(key)
                case let stored?: result.keys.append(stored)
                case nil: result.ignoredCount += 1
                }
            }
        }
        return result
    }
}
