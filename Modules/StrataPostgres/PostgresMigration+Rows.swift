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
            try refuseClash(
                entity: entity, attributes: attributes, groupBy: keys, where: ["true"] + present,
                [PostgresEngine.parameter(fill, storageClass: column.type.storageClass)])
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
    /// entity and attributes, and in its cause the first clashing rows and their values, before
    /// `CREATE UNIQUE INDEX` would fail on them.
    func checkUnique(entity: String, attributes: [String]) throws(StrataError) {
        try refuseClash(
            entity: entity, attributes: attributes, groupBy: attributes.map(pgQuoted),
            where: attributes.map { "\(pgQuoted($0)) IS NOT NULL" })
    }

    /// Throws the `.constraintViolation` of the first group of rows (the one with the lowest key)
    /// that share the values of `expressions` among the rows meeting `conditions`; its cause names
    /// the group's keys and values (``MigrationUniqueClash``).
    private func refuseClash(
        entity: String, attributes: [String], groupBy expressions: [String], where conditions: [String],
        _ parameters: [PGParameter] = []
    ) throws(StrataError) {
        let values = expressions.map { "quote_nullable(\($0))" }.joined(separator: " || ', ' || ")
        let groups = expressions.joined(separator: ", ")
        let clash = try session.run(
            """
            SELECT string_agg(id::text, ',' ORDER BY id), \(values) FROM \(qualified(entity)) \
            WHERE \(conditions.joined(separator: " AND ")) GROUP BY \(groups) HAVING count(*) > 1 \
            ORDER BY min(id) LIMIT 1
            """, parameters)
        guard clash.rowCount > 0 else { return }
        let keys = (clash.text(0, 0) ?? "").split(separator: ",").compactMap { Int64($0) }
        throw .constraintViolation(
            entity: entity, attributes: attributes,
            native: MigrationUniqueClash.cause(
                engine: PostgresError.engine, code: PostgresError.packed("23505"), sqlState: "23505", entity: entity,
                attributes: attributes, keys: keys, values: [clash.text(0, 1) ?? "?"]))
    }
}
