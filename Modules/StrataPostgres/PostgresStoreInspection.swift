import Foundation
package import StrataStorage

extension EngineConfiguration {
    /// Read-only access to an existing PostgreSQL store (the schema `schema` at `url`), for tools
    /// without a model: its record and what the catalog says of its indexes and constraints, read
    /// on a connection of their own, and the configuration that opens it (never creating the schema).
    package static func postgresInspection(url: String, schema: String) -> StoreInspection {
        let options = PostgresOptions(poolSize: 2, creation: .requireExistingSchema)
        return StoreInspection(
            engineName: "postgres", location: PostgresLocation.url(redacting: url, schema: schema).absoluteString,
            readRecord: { try PostgresStoreInspection.readRecord(url: url, schema: schema, options: options) },
            integrityProblems: {
                try PostgresStoreInspection.integrityProblems(url: url, schema: schema, options: options)
            },
            readHistorySummary: {
                try PostgresStoreInspection.historySummary(url: url, schema: schema, options: options)
            },
            configuration: .postgres(url: url, schema: schema, options: options))
    }
}

/// The catalog queries behind ``StrataStorage/EngineConfiguration/postgresInspection(url:schema:)``.
enum PostgresStoreInspection {
    /// The store's metadata, nil when the schema is missing or holds no table at all.
    /// - Throws: `.notAStore` for a schema of other tables or of another format; `.io` when the
    ///   server cannot be reached or refuses the login; `.storeCorrupt` for incomplete metadata.
    static func readRecord(url: String, schema: String, options: PostgresOptions) throws -> StoreRecord? {
        try withSession(url: url, schema: schema, options: options) { (session) throws(StrataError) -> StoreRecord? in
            let store = session.store
            let tables = try session.run(
                """
                SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace \
                WHERE n.nspname = $1 AND c.relkind IN ('r', 'p', 'v', 'm', 'f', 'S')
                """, [.rawText(schema)])
            if tables.rowCount == 0 { return nil }
            let names = Set((0..<tables.rowCount).compactMap { tables.text($0, 0) })
            guard names.contains("strata_metadata") else {
                throw .notAStore(
                    path: store,
                    reason: "schema \(schema) holds tables that are not a Strata store (no strata_metadata)")
            }
            let values = try PostgresEngine.readMetadata(session, names: PostgresStoreNames(schema: schema))
            guard values["format"] == PostgresEngine.format else {
                throw .notAStore(path: store, reason: "its strata_metadata has no format this build reads")
            }
            guard let identifier = values["store_identifier"].flatMap(UUID.init(uuidString:)),
                let version = values["schema_version"].flatMap({ Int($0) })
            else {
                throw .storeCorrupt(
                    "\(store): strata_metadata has no valid store_identifier or schema_version")
            }
            return StoreRecord(identifier: identifier, schemaVersion: version, recordedJSON: values["schema"])
        }
    }

    /// Indexes the catalog marks invalid or not ready, and constraints it marks not validated.
    static func integrityProblems(url: String, schema: String, options: PostgresOptions) throws -> [String] {
        try withSession(url: url, schema: schema, options: options) { (session) throws(StrataError) -> [String] in
            var problems: [String] = []
            let indexes = try session.run(
                """
                SELECT c.relname FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid \
                JOIN pg_namespace n ON n.oid = c.relnamespace \
                WHERE n.nspname = $1 AND NOT (i.indisvalid AND i.indisready AND i.indislive) ORDER BY 1
                """, [.rawText(schema)])
            for row in 0..<indexes.rowCount {
                problems.append(
                    "index \(indexes.text(row, 0) ?? "?") is marked invalid in the catalog; rebuild it (REINDEX)")
            }
            let constraints = try session.run(
                """
                SELECT c.conname FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace \
                WHERE n.nspname = $1 AND NOT c.convalidated ORDER BY 1
                """, [.rawText(schema)])
            for row in 0..<constraints.rowCount {
                problems.append("constraint \(constraints.text(row, 0) ?? "?") is not validated")
            }
            return problems
        }
    }

    /// How many history transactions `strata_history` keeps and its oldest token, in one query
    /// that decodes none.
    static func historySummary(url: String, schema: String, options: PostgresOptions) throws -> HistorySummary {
        try withSession(url: url, schema: schema, options: options) { (session) throws(StrataError) in
            let names = PostgresStoreNames(schema: schema)
            let result = try session.run("SELECT count(*), min(token) FROM \(names.history)", [])
            guard result.rowCount == 1, let count = result.int64(0, 0) else {
                throw .io(
                    """
                    \(session.store): the server answered SELECT count(*) on \(names.history) without a row; \
                    check the server (or what stands between it and this process) and run the command again
                    """)
            }
            return HistorySummary(transactions: Int(count), oldestToken: result.int64(0, 1))
        }
    }

    /// Runs `body` on a fresh connection of a pool of its own.
    private static func withSession<T>(
        url: String, schema: String, options: PostgresOptions, _ body: (PostgresSession) throws(StrataError) -> T
    ) throws -> T {
        try PostgresStoreContents.withMetadata(url: url, schema: schema, options: options) {
            (session, _) throws(StrataError) in
            try body(session)
        }
    }
}
