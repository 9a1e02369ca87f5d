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

    /// Sets `column` of `entity` to `fill` in every row (or only where it is null), walking the
    /// whole table in key order and reporting its rows as they are done.
    func fillColumn(
        entity: String, column: ColumnSchema, with fill: StoredValue, onlyNulls: Bool,
        progress: MigrationRowProgress
    ) throws(StrataError) {
        let table = qualified(entity)
        let name = pgQuoted(column.name)
        let total = Int(try session.int64("SELECT count(*) FROM \(table)") ?? 0)
        guard total > 0 else { return }
        // The update runs to completion whether or not the final SELECT reads it.
        let update = """
            WITH batch AS (SELECT "id" FROM \(table) WHERE "id" > $2 ORDER BY "id" LIMIT \(Self.fillBatch)), \
            updated AS (UPDATE \(table) AS target SET \(name) = $1 FROM batch WHERE target."id" = batch."id"\
            \(onlyNulls ? " AND target.\(name) IS NULL" : "") RETURNING 1) \
            SELECT count(*), max("id") FROM batch
            """
        let value = PostgresEngine.parameter(fill, storageClass: column.type.storageClass)
        var done = 0
        var after = Int64.min
        while true {
            let result: PGResult
            do throws(PGFailure) {
                result = try session.runRaw(update, [value, .int8(after)])
            } catch {
                throw uniqueClash(error) ?? session.error(error, sql: update)
            }
            let walked = Int(result.int64(0, 0) ?? 0)
            done += walked
            if let last = result.int64(0, 1) { after = last }
            progress.rowsMigrated(done, of: total)
            if walked < Self.fillBatch { return }
        }
    }

    /// Refuses filling the nulls of `column` with `fill` when that makes rows clash in a unique
    /// index over it, as an added unique constraint is refused (naming its entity and attributes),
    /// before the fill would break the index.
    func checkUniqueAfterFilling(entity: String, column: ColumnSchema, with fill: StoredValue) throws(StrataError) {
        let layout = try table(entity)
        for index in layout.entity.indexes where index.isUnique {
            let attributes = index.columns.map { layout.entity.columns[$0].name }
            guard attributes.contains(column.name) else { continue }
            let keys = attributes.map { $0 == column.name ? "coalesce(\(pgQuoted($0)), $1)" : pgQuoted($0) }
            let present = attributes.filter { $0 != column.name }.map { "\(pgQuoted($0)) IS NOT NULL" }
            let clash = try session.run(
                """
                SELECT 1 FROM \(qualified(entity)) WHERE \((["true"] + present).joined(separator: " AND ")) \
                GROUP BY \(keys.joined(separator: ", ")) HAVING count(*) > 1 LIMIT 1
                """, [PostgresEngine.parameter(fill, storageClass: column.type.storageClass)])
            if clash.rowCount > 0 { throw .constraintViolation(entity: entity, attributes: attributes) }
        }
    }

    /// A fill's unique violation (rows made to hold one value in a unique column) as the clash
    /// of the model's index it broke, naming its entity and attributes; nil for another failure.
    private func uniqueClash(_ failure: PGFailure) -> StrataError? {
        guard failure.sqlState == "23505", let constraint = failure.constraint else { return nil }
        for layout in tables {
            guard let index = layout.entity.indexes.first(where: { $0.name == constraint }) else { continue }
            return .constraintViolation(
                entity: layout.entity.name, attributes: index.columns.map { layout.entity.columns[$0].name },
                native: PostgresError.native(
                    failure, sql: nil, operation: "migrating", redacting: session.pool.settings.secret))
        }
        return nil
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
