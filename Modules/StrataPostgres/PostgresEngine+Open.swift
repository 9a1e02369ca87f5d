import Foundation
import StrataStorage

/// Opening a store (design notes §5): one transaction on one connection, under an advisory lock
/// keyed by the schema, that checks the store (the lock shared, so opens run at once) or creates,
/// migrates or records it (the lock exclusive, serialised across processes).
extension PostgresEngine {
    /// The `format` value of this layout in `strata_metadata`.
    static let format = "strata-postgres 1"
    /// The advisory-lock class of opens (`'STRA'` + 1) and of history writes (+ 2).
    static let openLockClass: Int64 = 1_398_035_009
    static let historyLockClass: Int64 = 1_398_035_010

    struct StoreMetadata {
        var identifier: UUID
        var schemaVersion: Int
        /// The store carried ``UnfinishedCopy/marker`` when it was opened.
        var isUnfinishedCopy = false
    }

    static func openStore(
        pool: PostgresPool, schema: StoreSchema, tables: [PostgresTableLayout], joins: [PostgresJoinLayout],
        names: PostgresStoreNames
    ) throws -> StoreMetadata {
        let connection = try pool.checkOut(.short, phase: .opening)
        defer { pool.checkIn(connection, .short) }
        let session = PostgresSession(connection: connection, pool: pool)
        let store = pool.settings.location
        let encoding = connection.parameter("server_encoding")
        guard encoding == "UTF8" else {
            throw StrataError.misuse(
                "\(store): the database's encoding is \(encoding ?? "unknown"); Strata stores need a UTF8 database")
        }
        guard connection.serverVersion >= 120_000 else {
            throw StrataError.misuse(
                "\(store): the server runs PostgreSQL \(connection.serverVersion / 10000); Strata needs 12 or newer")
        }
        let schemaName = pool.settings.schema
        // The usual open (the store exists and is the model's) only reads, under the lock taken
        // shared, so opens of many processes run at once and none waits for another's write
        // transaction. Creating, migrating or recording the schema needs the lock exclusively: that
        // open is done again from the start under it.
        for exclusive in [false, true] {
            try session.run("BEGIN", phase: .opening)
            do {
                let lock = exclusive ? "pg_advisory_xact_lock" : "pg_advisory_xact_lock_shared"
                try session.run(
                    "SELECT \(lock)($1::int4, hashtext($2))", [.int8(openLockClass), .rawText(schemaName)],
                    phase: .opening)
                let metadata = try openLocked(
                    session, schema: schema, schemaName: schemaName, tables: tables, joins: joins, names: names,
                    exclusive: exclusive)
                guard let metadata else {
                    try session.run("ROLLBACK", phase: .opening)
                    continue
                }
                try session.run("COMMIT", phase: .opening)
                return metadata
            } catch {
                session.rollbackQuietly()
                throw error
            }
        }
        // The exclusive pass returns its metadata or throws; an error, not a trap, if it ever did not.
        throw StrataError.io(
            """
            \(store): opening the store under the exclusive open lock returned no store metadata, which \
            Strata does not expect; nothing was written. Open the store again, and report this if it recurs
            """)
    }

    /// Checks the store, and creates, migrates or records its schema where `exclusive` (the open
    /// lock is held exclusively); returns nil when it would have to write but holds the lock only
    /// shared.
    private static func openLocked(
        _ session: PostgresSession, schema: StoreSchema, schemaName: String, tables: [PostgresTableLayout],
        joins: [PostgresJoinLayout], names: PostgresStoreNames, exclusive: Bool
    ) throws -> StoreMetadata? {
        let store = session.store
        let exists = try session.run("SELECT 1 FROM pg_namespace WHERE nspname = $1", [.rawText(schemaName)])
        if exists.rowCount == 0 {
            guard session.pool.options.creation == .createSchema else {
                throw StrataError.notAStore(
                    path: store,
                    reason:
                        """
                        schema \(schemaName) does not exist and PostgresOptions.creation is .requireExistingSchema; \
                        create the store first
                        """
                )
            }
            guard exclusive else { return nil }
            try session.run("CREATE SCHEMA \(names.schema)")
            return try createStore(session, schema: schema, tables: tables, joins: joins, names: names)
        }
        let relations = try session.run(
            """
            SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace \
            WHERE n.nspname = $1 AND c.relkind IN ('r', 'p', 'v', 'm', 'f', 'S')
            """, [.rawText(schemaName)])
        if relations.rowCount == 0 {
            // An empty schema holds no store yet: one that must exist is refused here too.
            guard session.pool.options.creation == .createSchema else {
                throw StrataError.notAStore(
                    path: store,
                    reason:
                        """
                        schema \(schemaName) holds no store (it has no tables) and PostgresOptions.creation is \
                        .requireExistingSchema; create the store first
                        """
                )
            }
            guard exclusive else { return nil }
            return try createStore(session, schema: schema, tables: tables, joins: joins, names: names)
        }
        var relationNames: Set<String> = []
        for row in 0..<relations.rowCount { if let name = relations.text(row, 0) { relationNames.insert(name) } }
        guard relationNames.contains("strata_metadata") else {
            throw StrataError.notAStore(
                path: store,
                reason:
                    """
                    schema \(schemaName) holds tables that are not a Strata store (no strata_metadata): \
                    \(relationNames.sorted().prefix(5).joined(separator: ", "))
                    """
            )
        }
        let values = try readMetadata(session, names: names)
        guard values["format"] == format else {
            throw StrataError.notAStore(
                path: store,
                reason:
                    """
                    its strata_metadata has no format \(String(reflecting: format)) (found \
                    \(values["format"].map { String(reflecting: String($0.prefix(40))) } ?? "none")): not a Strata \
                    PostgreSQL store, or damaged
                    """
            )
        }
        guard let identifier = values["store_identifier"].flatMap(UUID.init(uuidString:)) else {
            throw StrataError.notAStore(path: store, reason: "its strata_metadata has no valid store_identifier")
        }
        guard let version = values["schema_version"].flatMap({ Int($0) }) else {
            throw StrataError.notAStore(path: store, reason: "its strata_metadata has no integer schema_version")
        }
        for table in ["strata_key_counters", "strata_history", "strata_history_cursors", "strata_history_clock"]
        where !relationNames.contains(table) {
            throw StrataError.notAStore(path: store, reason: "its schema lacks Strata's table \(table)")
        }
        // Stores made before commits carried an identity get the table now, under the open lock.
        if !relationNames.contains("strata_commits") {
            guard exclusive else { return nil }
            for statement in createCommitsTable(names) { try session.run(statement) }
        }
        // An older store is migrated, which writes; a newer one is refused by the reconcile.
        guard exclusive || version >= schema.version else { return nil }
        let migration = PostgresMigrationSession(session: session, schemaName: schemaName, storeIdentifier: identifier)
        let outcome = try schema.reconcileRecorded(
            storeVersion: version, recordedJSON: values["schema"], path: store, session: migration)
        var metadata = StoreMetadata(identifier: identifier, schemaVersion: version)
        switch outcome {
        case .matches: break
        case .migrated: metadata.schemaVersion = schema.version
        case .recordNow:
            guard exclusive else { return nil }
            try checkUnrecordedTables(
                session, schemaName: schemaName, tables: tables, joins: joins, storeVersion: version,
                modelVersion: schema.version)
            try recordSchema(session, schema: schema, names: names)
        }
        // The key counters, and in the same round trip whether `strata copy` marked the store
        // unfinished (a row whose entity is null).
        let counters = try session.run(
            """
            SELECT entity FROM \(names.keyCounters) \
            UNION ALL SELECT NULL FROM \(names.historyCursors) WHERE name = $1
            """, [.rawText(UnfinishedCopy.marker)])
        var counted: Set<String> = []
        for row in 0..<counters.rowCount {
            if let name = counters.text(row, 0) { counted.insert(name) } else { metadata.isUnfinishedCopy = true }
        }
        for entity in schema.entities where !counted.contains(entity.name) {
            throw StrataError.storeCorrupt("\(store): strata_key_counters has no row for entity \(entity.name)")
        }
        return metadata
    }

    /// Every `strata_metadata` row, key → value.
    static func readMetadata(
        _ session: PostgresSession, names: PostgresStoreNames
    ) throws(StrataError) -> [String: String] {
        let result = try session.run("SELECT key, value FROM \(names.metadata)")
        var values: [String: String] = [:]
        for row in 0..<result.rowCount {
            if let key = result.text(row, 0), let value = result.text(row, 1) { values[key] = value }
        }
        return values
    }

    private static func createStore(
        _ session: PostgresSession, schema: StoreSchema, tables: [PostgresTableLayout], joins: [PostgresJoinLayout],
        names: PostgresStoreNames
    ) throws(StrataError) -> StoreMetadata {
        let statements =
            [
                "CREATE TABLE \(names.metadata) (key text PRIMARY KEY, value text NOT NULL)",
                "CREATE TABLE \(names.keyCounters) (entity text PRIMARY KEY, next_key int8 NOT NULL)",
                "CREATE TABLE \(names.historyClock) (id int4 PRIMARY KEY CHECK (id = 1), last_token int8 NOT NULL)",
                "INSERT INTO \(names.historyClock) (id, last_token) VALUES (1, 0)",
                """
                CREATE TABLE \(names.history) (token int8 PRIMARY KEY, "timestamp" float8 NOT NULL, author text, \
                changes text NOT NULL)
                """,
                "CREATE TABLE \(names.historyCursors) (name text PRIMARY KEY, token int8 NOT NULL)",
            ] + createCommitsTable(names)
        for statement in statements { try session.run(statement) }
        for table in tables { for statement in table.create(schemaName: "") { try session.run(statement) } }
        for join in joins { for statement in join.create() { try session.run(statement) } }
        let identifier = UUID()
        let insert = "INSERT INTO \(names.metadata) (key, value) VALUES ($1, $2)"
        try session.run(insert, [.rawText("format"), .rawText(format)])
        try session.run(insert, [.rawText("store_identifier"), .rawText(identifier.uuidString)])
        try session.run(insert, [.rawText("schema_version"), .rawText(String(schema.version))])
        try recordSchema(session, schema: schema, names: names)
        for entity in schema.entities {
            try session.run(
                "INSERT INTO \(names.keyCounters) (entity, next_key) VALUES ($1, 1)", [.rawText(entity.name)])
        }
        return StoreMetadata(identifier: identifier, schemaVersion: schema.version)
    }

    /// Records the schema's JSON (`schema` row), replacing an earlier one.
    static func recordSchema(
        _ session: PostgresSession, schema: StoreSchema, names: PostgresStoreNames
    ) throws(StrataError) {
        guard let recorded = schema.recorded else { return }
        try session.run(
            """
            INSERT INTO \(names.metadata) (key, value) VALUES ('schema', $1) \
            ON CONFLICT (key) DO UPDATE SET value = excluded.value
            """, [.text(try recorded.jsonText())])
    }
}
