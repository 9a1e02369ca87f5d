import StrataStorage

/// The steps that rewrite rows: a column filled with a value (added with a default, or made
/// required), and the check of existing rows before a unique index is added.
///
/// Fills are `UPDATE … SET c = $1` with the value bound, never spliced, in batches of
/// ``fillBatch`` rows in key order, reporting the rows done after each batch. Row versions are
/// kept: a migration changes what the store means, not what a context last saw.
extension PostgresMigration {
    /// Rows updated per statement, and between two progress reports.
    static let fillBatch = 5_000

    /// Sets `column` of `entity` to `fill` in every row (or only where it is null).
    func fillColumn(
        entity: String, column: ColumnSchema, with fill: StoredValue, onlyNulls: Bool,
        progress: MigrationRowProgress
    ) throws(StrataError) {
        let table = qualified(entity)
        let name = pgQuoted(column.name)
        let condition = onlyNulls ? " AND \(name) IS NULL" : ""
        let total = Int(try session.int64("SELECT count(*) FROM \(table) WHERE true\(condition)") ?? 0)
        guard total > 0 else { return }
        let update = """
            WITH batch AS (SELECT "id" FROM \(table) WHERE "id" > $2\(condition) ORDER BY "id" \
            LIMIT \(Self.fillBatch)) \
            UPDATE \(table) AS target SET \(name) = $1 FROM batch WHERE target."id" = batch."id" \
            RETURNING target."id"
            """
        let value = PostgresEngine.parameter(fill, storageClass: column.type.storageClass)
        var done = 0
        var after = Int64.min
        while true {
            let result = try session.run(update, [value, .int8(after)])
            done += result.rowCount
            for row in 0..<result.rowCount {
                if let key = result.int64(row, 0), key > after { after = key }
            }
            progress.rowsMigrated(done, of: total)
            if result.rowCount < Self.fillBatch { return }
        }
    }

    /// Refuses a unique constraint that existing rows break (nulls never clash), naming the
    /// entity and attributes, before `CREATE UNIQUE INDEX` would fail on them.
    func checkUnique(entity: String, attributes: [String]) throws(StrataError) {
        let columns = attributes.map(pgQuoted).joined(separator: ", ")
        let present = attributes.map { "\(pgQuoted($0)) IS NOT NULL" }.joined(separator: " AND ")
        let clash = try session.run(
            """
            SELECT 1 FROM \(qualified(entity)) WHERE \(present) GROUP BY \(columns) HAVING count(*) > 1 LIMIT 1
            """)
        if clash.rowCount > 0 { throw .constraintViolation(entity: entity, attributes: attributes) }
    }
}
