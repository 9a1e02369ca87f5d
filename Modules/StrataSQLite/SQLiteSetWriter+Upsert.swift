import StrataStorage

extension SQLiteSetWriter {
    /// The most rows one upsert statement inserts: enough to spread SQLite's cost per statement
    /// (its start, its statement journal, its end) thin, few enough for a short statement.
    static var upsertChunk: Int { 64 }

    /// Inserts each row with its key, or updates (or leaves) the stored row holding its unique
    /// values: prepared `INSERT … VALUES (…), … ON CONFLICT` statements of up to ``upsertChunk``
    /// rows (``SQLiteSetWriteSQL/upsert(_:table:rows:)``), whose rows SQLite writes in order. The
    /// update hook tells what they did: a row's own key written is an insert (fresh keys are no
    /// stored row's), another key the stored row an update wrote; the rows left are ignored.
    /// - Throws: `.misuse` for a key that is not positive or a value its column cannot hold;
    ///   `.constraintViolation` naming another unique index a row clashes with; SQLite's errors.
    func upsert(_ upsert: SetWrite.Upsert, table: SQLiteTableLayout) throws(StrataError) -> SetWriteResult {
        var result = SetWriteResult()
        guard !upsert.rows.isEmpty else { return result }
        let width = table.storageClasses.count + 1
        let chunk = max(1, min(Self.upsertChunk, connection.variableLimit / width))
        let rowCount = min(upsert.rows.count, upsert.keys.count)
        // Two statements at most, each built, found in the cache and prepared once: full chunks
        // and the rest.
        let full =
            rowCount >= chunk
            ? try connection.statement(SQLiteSetWriteSQL.upsert(upsert, table: table, rows: chunk)) : nil
        _ = try collectingRowids { () throws(StrataError) in
            var start = 0
            while start < rowCount {
                let count = min(chunk, rowCount - start)
                let statement: SQLiteStatement
                if count == chunk, let full {
                    statement = full
                } else {
                    statement = try connection.statement(SQLiteSetWriteSQL.upsert(upsert, table: table, rows: count))
                }
                defer { statement.reset() }
                for offset in 0..<count {
                    try bind(upsert, row: start + offset, table: table, to: statement, at: Int32(offset * width + 1))
                }
                let before = connection.collectedRowidCount
                do throws(StrataError) {
                    _ = try statement.step()
                } catch {
                    guard case .constraintViolation = error else { throw error }
                    // SQLite undid the statement; the rows one by one name the clashing one.
                    statement.reset()
                    try upsertOneByOne(upsert, rows: start..<(start + count), table: table)
                    throw error
                }
                var row = start
                for index in before..<connection.collectedRowidCount {
                    let written = connection.collectedRowid(at: index)
                    // Rows are written in order: the first row from here whose key was written.
                    var match = row
                    while match < start + count, upsert.keys[match] != written { match += 1 }
                    if match < start + count {
                        result.insertedKeys.append(written)
                        row = match + 1
                    } else {
                        result.keys.append(written)
                    }
                }
                start += count
            }
        }
        result.ignoredCount = rowCount - result.insertedKeys.count - result.keys.count
        return result
    }

    /// Runs the upsert of `rows` one row per statement, to find the row of a unique clash.
    /// - Throws: `.constraintViolation` naming the unique index (other than the upsert's own)
    ///   the first clashing row clashes with; the errors of a write.
    private func upsertOneByOne(
        _ upsert: SetWrite.Upsert, rows: Range<Int>, table: SQLiteTableLayout
    ) throws(StrataError) {
        let statement = try connection.statement(SQLiteSetWriteSQL.upsert(upsert, table: table, rows: 1))
        defer { statement.reset() }
        for row in rows {
            try bind(upsert, row: row, table: table, to: statement, at: 1)
            do throws(StrataError) {
                _ = try statement.step()
            } catch .constraintViolation(_, _, let native) {
                let write = RowWrite(
                    entity: table.entity.number, key: upsert.keys[row], expectedVersion: 0, values: upsert.rows[row])
                let index = try connection.clashingUniqueIndex(of: table, for: write, skipping: upsert.uniqueColumns)
                let attributes = index?.columns.map { table.entity.columns[$0].name } ?? []
                throw .constraintViolation(entity: table.entity.name, attributes: attributes, native: native)
            }
            statement.rewind()
        }
    }

    /// Binds row `row`'s key at `index` and its values after it, an integer into a REAL column
    /// as a double (as row writes bind it).
    private func bind(
        _ upsert: SetWrite.Upsert, row: Int, table: SQLiteTableLayout, to statement: SQLiteStatement, at index: Int32
    ) throws(StrataError) {
        let key = upsert.keys[row]
        guard key > 0 else { throw .misuse("\(table.entity.name) primary keys must be positive, got \(key)") }
        try statement.checkBound(statement.bindReturningCode(key, at: index))
        let classes = table.storageClasses
        let values = upsert.rows[row]
        for column in classes.indices {
            let value = values[column]
            let position = index + Int32(column + 1)
            if classes[column].admits(value) {
                try statement.checkBound(statement.bindReturningCode(value, at: position))
            } else if classes[column] == .real, case .integer(let integer) = value {
                try statement.checkBound(statement.bindReturningCode(.real(Double(integer)), at: position))
            } else {
                throw .misuse(
                    """
                    \(table.entity.name).\(table.entity.columns[column].name) stores \
                    \(classes[column].rawValue) values, got \(value)
                    """
                )
            }
        }
    }
}
