import Foundation
import StrataStorage
import Synchronization

/// The PostgreSQL ``StorageEngine``: one store per schema of a database, reached through a
/// bounded pool of libpq connections (issue 17).
///
/// Created through ``StrataStorage/EngineConfiguration/postgres(url:schema:options:)``. Readers
/// are `REPEATABLE READ READ ONLY` transactions; commits are `READ COMMITTED` transactions that
/// lock and check every row version they depend on; keys come from a counter row per entity.
final class PostgresEngine: StorageEngine, UnfinishedCopyAtOpen {
    let storeIdentifier: UUID
    let schemaVersion: Int
    /// Whether the store carried the unfinished-copy mark when it was opened: read with the key
    /// counters in the open's transaction, so that the check takes no round trip of its own.
    let wasUnfinishedCopyAtOpen: Bool
    let schema: StoreSchema
    let pool: PostgresPool
    let tables: [PostgresTableLayout]
    let joins: [PostgresJoinLayout]
    /// `"schema"."strata_metadata"` and the other Strata tables, quoted.
    let names: PostgresStoreNames
    /// Per entity: keys reserved in the store but not handed out yet.
    let keyBlocks = Mutex<[Int: Range<Int64>]>([:])
    /// The LISTEN connection that signals commits to observers (started on first use).
    let notifications: PostgresNotifications
    /// When this engine last pruned `strata_commits` (``pruneCommitsIfDue(_:)``).
    let lastCommitPrune = Mutex<ContinuousClock.Instant?>(nil)
    /// Per table (quoted and qualified): how it grew since its last analysis
    /// (``refreshPlannerStatistics(after:results:session:)``).
    let tableGrowth = Mutex<[String: TableGrowth]>([:])

    /// Opens or creates the store.
    /// - Throws: `.misuse` (URL, schema name), `.io` (server unreachable, login refused),
    ///   `.notAStore`, `.schemaMismatch`, `.storeNewerThanModel`, `.invalidSchema`, `.busy`.
    static func open(
        url: String, schema: String, storeSchema: StoreSchema, options: PostgresOptions
    ) throws
        -> PostgresEngine
    {
        let settings = try PostgresConnectionSettings(url: url, schema: schema, options: options)
        try validatePostgresLayout(storeSchema)
        let pool = PostgresPool(settings: settings, options: options)
        let tables = storeSchema.entities.map { PostgresTableLayout(entity: $0, schemaName: schema) }
        let joins = storeSchema.joins.map { PostgresJoinLayout(join: $0, schemaName: schema) }
        let names = PostgresStoreNames(schema: schema)
        let metadata: StoreMetadata
        do {
            metadata = try openStore(pool: pool, schema: storeSchema, tables: tables, joins: joins, names: names)
        } catch {
            pool.close()
            throw error
        }
        return PostgresEngine(
            metadata: metadata, schema: storeSchema, pool: pool, tables: tables, joins: joins, names: names)
    }

    /// An engine over `pool`, once its store is open (also the layout behind a migration's
    /// ``PostgresTransactionEngine``, over a pool of its own that never connects).
    init(
        metadata: StoreMetadata, schema: StoreSchema, pool: PostgresPool, tables: [PostgresTableLayout],
        joins: [PostgresJoinLayout], names: PostgresStoreNames
    ) {
        storeIdentifier = metadata.identifier
        schemaVersion = metadata.schemaVersion
        wasUnfinishedCopyAtOpen = metadata.isUnfinishedCopy
        self.schema = schema
        self.pool = pool
        self.tables = tables
        self.joins = joins
        self.names = names
        notifications = PostgresNotifications(
            settings: pool.settings, statementTimeout: pool.options.statementTimeout, names: names)
    }

    deinit { close() }

    /// The store's redacted location, for messages.
    var location: String { pool.settings.location }

    func makeReader() throws -> any StoreReader {
        let connection = try pool.checkOut(.reader)
        do throws(StrataError) {
            return try PostgresReader(engine: self, connection: connection)
        } catch {
            pool.checkIn(connection, .reader)
            throw error
        }
    }

    func close() {
        keyBlocks.withLock { $0.removeAll() }
        notifications.stop()
        pool.close()
    }

    /// Runs `body` with a short lease, returned afterwards (rolled back if a transaction is left open).
    @discardableResult
    func withSession<T>(_ body: (PostgresSession) throws(StrataError) -> T) throws(StrataError) -> T {
        let connection = try pool.checkOut(.short)
        defer { pool.checkIn(connection, .short) }
        return try body(PostgresSession(connection: connection, pool: pool))
    }

    /// Runs `body` in a `READ COMMITTED` transaction on a short lease, committed when it returns.
    ///
    /// With `checkingSchemaVersion`, the transaction holds the store's open lock shared and has
    /// checked the schema version before `body` runs (``beginCheckingSchemaVersion(_:_:)``). A lost
    /// reply to its `COMMIT` is settled (``commitIdentified(_:appending:)``), unless `retrySafe`
    /// says that applying the transaction twice or not at all is harmless (a key reservation: keys
    /// are never reused, and gaps are allowed); then it is `.busy`, and a retry is safe.
    @discardableResult
    func withTransaction<T>(
        checkingSchemaVersion: Bool = false, retrySafe: Bool = false,
        _ body: (PostgresSession) throws(StrataError) -> T
    ) throws(StrataError) -> T {
        try withSession { (session) throws(StrataError) -> T in
            if checkingSchemaVersion {
                try beginCheckingSchemaVersion(session)
            } else {
                try session.runScript("BEGIN")
            }
            let value: T
            do throws(StrataError) {
                value = try body(session)
            } catch {
                session.rollbackQuietly()
                throw error
            }
            if retrySafe { try session.runScript("COMMIT") } else { try commitIdentified(session) }
            return value
        }
    }

    /// Opens a transaction on `session` with `statement` (`BEGIN`, or one with an isolation
    /// level), takes the store's open lock shared and checks the schema version
    /// (``checkSchemaVersion(_:)``), all in one round trip; rolls the transaction back when any of
    /// it fails.
    ///
    /// An open that creates, migrates or records the store's schema holds that lock exclusively
    /// until it commits (other opens hold it shared), so taking it shared waits for such an
    /// open in progress, and keeps a migration from starting until this transaction ends. The
    /// check is the script's last statement, which takes its snapshot after the lock's wait
    /// (under `READ COMMITTED`), so a write never reads the old version and then writes into
    /// tables a migration changed meanwhile (a NOT NULL violation, or a row the migration never
    /// converted).
    /// - Throws: `.storeNewerThanModel` when another engine migrated the store since this one
    ///   opened; the server's errors.
    func beginCheckingSchemaVersion(_ session: PostgresSession, _ statement: String = "BEGIN") throws(StrataError) {
        let sql = """
            \(statement); SELECT pg_advisory_xact_lock_shared(\(Self.openLockClass), hashtext(\(schemaLiteral))); \
            \(names.versionAndIdentity)
            """
        do throws(StrataError) {
            let result: PGResult
            do {
                result = try session.connection.executeScript(sql, deadline: pool.statementDeadline)
            } catch {
                throw session.error(error, sql: sql)
            }
            try checkSchemaVersion(result)
        } catch {
            session.rollbackQuietly()
            throw error
        }
    }

    /// The store's schema name as an SQL string literal (`E'…'`, so its meaning does not depend on
    /// `standard_conforming_strings`).
    var schemaLiteral: String {
        let escaped = pool.settings.schema.replacing("\\", with: "\\\\").replacing("'", with: "\\'")
        return "E'\(escaped)'"
    }

    /// Checks the `schema_version` and `store_identifier` values a query returned
    /// (``PostgresStoreNames/versionAndIdentity``: one row, two text columns).
    /// - Throws: `.storeNewerThanModel` when another engine migrated the store since this one
    ///   opened; `.notAStore` when the store was replaced since (dropped and made again, or given a
    ///   new identity): this engine's cached keys and object IDs belong to the old one.
    func checkSchemaVersion(_ result: PGResult) throws(StrataError) {
        guard result.rowCount == 1, let text = result.text(0, 0), let stored = Int(text) else {
            throw .storeCorrupt("\(location): strata_metadata has no integer schema_version")
        }
        if stored != schemaVersion {
            throw .storeNewerThanModel(storeVersion: stored, modelVersion: schemaVersion)
        }
        let identifier = result.text(0, 1)
        if identifier.flatMap(UUID.init(uuidString:)) != storeIdentifier {
            throw .notAStore(
                path: location,
                reason: """
                    it is no longer the store this container opened: its store_identifier is \
                    \(identifier ?? "missing"), not \(storeIdentifier.uuidString) (the schema was dropped and \
                    made again, or the store given a new identity). Open it again with a new container; \
                    object IDs from the old one name a store that is gone
                    """)
        }
    }

    /// The layout of an entity, or `.misuse` when the number is out of range.
    func table(_ entity: Int) throws(StrataError) -> PostgresTableLayout {
        guard tables.indices.contains(entity) else {
            throw .misuse("entity number \(entity) is not in the schema (it has \(tables.count) entities)")
        }
        return tables[entity]
    }

    /// The layout of a join, or `.misuse` when the number is out of range.
    func join(_ number: Int) throws(StrataError) -> PostgresJoinLayout {
        guard joins.indices.contains(number) else {
            throw .misuse("join number \(number) is not in the schema (it has \(joins.count) joins)")
        }
        return joins[number]
    }
}

/// The quoted names of Strata's own tables in a store's schema, and their common statements.
struct PostgresStoreNames: Sendable {
    let schema: String
    let metadata: String
    /// One row: the store's `schema_version` and `store_identifier`, checked at the start of
    /// every transaction (``PostgresEngine/checkSchemaVersion(_:)``).
    var versionAndIdentity: String {
        """
        SELECT (SELECT value FROM \(metadata) WHERE key = 'schema_version'), \
        (SELECT value FROM \(metadata) WHERE key = 'store_identifier')
        """
    }
    let keyCounters: String
    let historyClock: String
    let history: String
    let historyCursors: String
    /// `strata_commits`: the identity of every recent commit
    /// (``PostgresEngine/commitIdentified(_:appending:)``).
    let commits: String

    init(schema: String) {
        self.schema = pgQuoted(schema)
        metadata = self.schema + ".strata_metadata"
        keyCounters = self.schema + ".strata_key_counters"
        historyClock = self.schema + ".strata_history_clock"
        history = self.schema + ".strata_history"
        historyCursors = self.schema + ".strata_history_cursors"
        commits = self.schema + ".strata_commits"
    }
}
