import Foundation
import StrataStorage

extension SQLiteEngine {
    /// The `strata_metadata` key of the recorded schema (JSON, see `RecordedSchema.jsonText()`).
    static let recordedSchemaKey = "schema"

    /// Records the schema's JSON at creation (nothing for a schema without one).
    static func recordSchema(_ connection: SQLiteConnection, _ schema: StoreSchema) throws(StrataError) {
        guard let recorded = schema.recorded else { return }
        let statement = try connection.statement("INSERT INTO strata_metadata (key, value) VALUES (?1, ?2)")
        try statement.bind(.text(recordedSchemaKey), at: 1)
        try statement.bind(.text(try recorded.jsonText()), at: 2)
        try statement.run()
    }

    /// Compares what the store recorded with the schema, inside the open's write transaction.
    ///
    /// A store made before recorded schemas (no `schema` row) whose version matches is upgraded
    /// once: its tables and indexes must be exactly the ones this schema creates (the `CREATE`
    /// statements SQLite keeps in `sqlite_schema` are compared, so names, column order, types,
    /// `NOT NULL`, references and indexes all count), then the schema is recorded.
    /// An older store is migrated here, in the same transaction, by the shared driver
    /// (`StoreSchema.reconcileRecorded`) through a ``SQLiteMigrationSession``.
    /// - Returns: whether the store was migrated (its version is now the schema's).
    /// - Throws: `.schemaMismatch` (versions or shapes differ, or the unrecorded store's tables are
    ///   not the model's), `.storeNewerThanModel`, `.storeCorrupt` (unreadable JSON), `.notAStore`
    ///   (JSON of a newer layout), `.migrationNotInferable`, `.migrationStageFailed`, and a
    ///   migration step's errors.
    static func checkRecordedSchema(
        _ connection: SQLiteConnection, schema: StoreSchema, storeVersion: Int, storeIdentifier: UUID,
        tables: [SQLiteTableLayout], joins: [SQLiteJoinLayout]
    ) throws(StrataError) -> Bool {
        let json = try connection.queryText(
            "SELECT value FROM strata_metadata WHERE key = ?1", [.text(recordedSchemaKey)])
        let session = SQLiteMigrationSession(connection: connection, storeIdentifier: storeIdentifier)
        let outcome = try schema.reconcileRecorded(
            storeVersion: storeVersion, recordedJSON: json, path: connection.path, session: session)
        if outcome == .migrated { return true }
        guard outcome == .recordNow else { return false }
        var expected: [String] = []
        for table in tables { expected += [table.createTable(schema: schema)] + table.createIndexes() }
        for join in joins { expected += join.create(schema: schema) }
        for statement in expected
        where try connection.queryInt64("SELECT count(*) FROM sqlite_schema WHERE sql = ?1", [.text(statement)]) != 1 {
            throw .schemaMismatch(
                storeVersion: storeVersion, modelVersion: schema.version,
                differences: [.unrecordedStoreDiffers("the store has no `\(statement)`")])
        }
        let present =
            try connection.queryInt64(
                """
                SELECT count(*) FROM sqlite_schema WHERE type IN ('table', 'index') AND sql IS NOT NULL \
                AND name NOT LIKE 'strata\\_%' ESCAPE '\\' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'
                """) ?? 0
        guard present == Int64(expected.count) else {
            throw .schemaMismatch(
                storeVersion: storeVersion, modelVersion: schema.version,
                differences: [
                    .unrecordedStoreDiffers(
                        "it has \(present) tables and indexes where the model has \(expected.count)")
                ])
        }
        try recordSchema(connection, schema)
        return false
    }
}
