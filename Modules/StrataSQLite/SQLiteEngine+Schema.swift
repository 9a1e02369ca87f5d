import Foundation
import StrataStorage

extension SQLiteEngine {
    /// The layout version of Strata's SQLite files; stored as `format_version`.
    static let formatVersion: Int64 = 1

    /// What a store records about itself.
    struct StoreMetadata {
        var identifier: UUID
        var schemaVersion: Int
        /// The store carried ``UnfinishedCopy/marker`` when it was opened.
        var isUnfinishedCopy = false
    }

    /// Rejects paths that cannot be a SQLite store before SQLite touches them.
    ///
    /// Only `stat(2)` is used here: the file is never opened outside SQLite (see
    /// ``checkHeader(_:)``, which reads the header once SQLite has opened the file).
    /// A missing file is fine: the caller creates it (see
    /// ``createStoreFile(at:schema:tables:joins:options:)``).
    /// - Returns: whether the file exists.
    /// - Throws: `.notAStore` for a directory, anything else that is not a regular file (a device
    ///   such as `/dev/null`, a FIFO, a socket) or an empty file; `.misuse` when the file has other
    ///   hard links.
    @discardableResult
    static func probeFile(at path: String) throws(StrataError) -> Bool {
        switch SystemCalls.fileKind(atPath: path) {
        case nil:
            return false
        case .regularFile?:
            break
        case .directory?:
            throw .notAStore(
                path: path, reason: "it is a directory (an LMDB store or another engine's store?), not a SQLite file")
        case let kind?:
            // A device reads as empty or endless, and a FIFO blocks its reader: none can hold a store.
            throw .notAStore(
                path: path,
                reason: "it is \(kind.description), not a regular file, and a SQLite store is a regular file")
        }
        if (try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int == 0 {
            throw .notAStore(path: path, reason: "the file is empty (0 bytes)")
        }
        // SQLite names its WAL after the path it was given: two names for one file get two
        // WALs, which corrupts the database. A creator's temporary name is no such second name:
        // nobody opens it after it was linked into place, and its creator unlinks it at once
        // (so the count is read again after the directory was searched for such names).
        func linkCount() -> Int {
            ((try? FileManager.default.attributesOfItem(atPath: path))?[.referenceCount] as? Int) ?? 1
        }
        if linkCount() > 1, case let creators = creationLinks(toStoreAt: path), case let links = linkCount(),
            links - 1 > creators
        {
            throw .misuse(
                """
                \(path) has \(links) hard links. SQLite keeps its write-ahead log next to the name it was opened \
                by, so two names for one store would corrupt it: remove the extra links and open the store by one \
                name
                """
            )
        }
        return true
    }

    /// Rejects a file that does not start with the SQLite header, reading it through `connection`
    /// (just opened, before its first query).
    ///
    /// SQLite happily "opens" a garbage file, failing only at the first query, and treats a 0-byte
    /// file as an empty database. The header is read through SQLite's own descriptor
    /// (``SQLiteConnection/fileStart(count:)``): opening and closing a descriptor of our own would
    /// drop the POSIX locks of every connection this process has on the file (another container's
    /// too), and another process could then delete the write-ahead log under them.
    /// - Throws: `.notAStore` for an empty file or a file without the SQLite header; `.io` when the
    ///   file cannot be read.
    static func checkHeader(_ connection: SQLiteConnection) throws(StrataError) {
        let path = connection.path
        let header = try connection.fileStart(count: 16)
        if header.isEmpty {
            throw .notAStore(path: path, reason: "the file is empty (0 bytes)")
        }
        guard header == Array("SQLite format 3\0".utf8) else {
            throw .notAStore(path: path, reason: "the file does not start with the SQLite header")
        }
    }

    /// Configures a fresh writer connection, then creates the store or checks the existing one.
    /// - Throws: `.notAStore`, `.schemaMismatch`, `.storeNewerThanModel`, `.storeCorrupt`, `.io`,
    ///   `.busy`, and a migration's errors.
    static func prepareStore(
        _ connection: SQLiteConnection, schema: StoreSchema, tables: [SQLiteTableLayout],
        joins: [SQLiteJoinLayout], options: SQLiteOptions
    ) throws(StrataError) -> StoreMetadata {
        let path = connection.path
        // The first real read: SQLITE_NOTADB surfaces here for damaged headers.
        _ = try connection.queryInt64("SELECT count(*) FROM sqlite_schema")
        let mode = try connection.queryText("PRAGMA journal_mode = WAL")
        guard mode?.lowercased() == "wal" else {
            throw .io("\(path): could not switch the journal to WAL mode (got \(mode ?? "nothing"))")
        }
        try connection.execute("PRAGMA synchronous = \(options.synchronous.rawValue)")
        try connection.execute("PRAGMA foreign_keys = OFF")

        try connection.execute("BEGIN IMMEDIATE")
        do throws(StrataError) {
            let metadata: StoreMetadata
            let objects = try connection.queryInt64("SELECT count(*) FROM sqlite_schema") ?? 0
            let hasMetadata =
                try connection.queryInt64(
                    "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'strata_metadata'") ?? 0
            if objects == 0 {
                metadata = try createStore(connection, schema: schema, tables: tables, joins: joins)
            } else if hasMetadata == 0 {
                throw StrataError.notAStore(
                    path: path, reason: "it is a SQLite database without a strata_metadata table (not a Strata store)")
            } else {
                var read = try readMetadata(connection)
                // Before a migration, whose stages may commit change sets with history.
                try prepareHistory(connection)
                if try checkRecordedSchema(
                    connection, schema: schema, storeVersion: read.schemaVersion, storeIdentifier: read.identifier,
                    tables: tables, joins: joins)
                {
                    read.schemaVersion = schema.version
                }
                read.isUnfinishedCopy =
                    try connection.queryInt64(
                        "SELECT count(*) FROM strata_history_cursors WHERE name = ?1", [.text(UnfinishedCopy.marker)])
                    ?? 0 > 0
                metadata = read
                try checkKeyCounters(connection, schema: schema)
            }
            try connection.execute("COMMIT")
            return metadata
        } catch {
            connection.rollbackQuietly()
            throw error
        }
    }

    private static func createStore(
        _ connection: SQLiteConnection, schema: StoreSchema, tables: [SQLiteTableLayout], joins: [SQLiteJoinLayout]
    ) throws(StrataError) -> StoreMetadata {
        try connection.execute("CREATE TABLE strata_metadata (key TEXT PRIMARY KEY, value)")
        try connection.execute("CREATE TABLE strata_key_counters (entity TEXT PRIMARY KEY, next_key INTEGER NOT NULL)")
        for table in tables {
            try connection.execute(table.createTable(schema: schema))
            for index in table.createIndexes() { try connection.execute(index) }
        }
        for join in joins {
            for statement in join.create(schema: schema) { try connection.execute(statement) }
        }
        let identifier = UUID()
        let insertMetadata = "INSERT INTO strata_metadata (key, value) VALUES (?1, ?2)"
        try setMetadata(connection, insertMetadata, "store_uuid", .text(identifier.uuidString))
        try setMetadata(connection, insertMetadata, "schema_version", .integer(Int64(schema.version)))
        try setMetadata(connection, insertMetadata, "format_version", .integer(formatVersion))
        try recordSchema(connection, schema)
        try prepareHistory(connection)
        let counter = try connection.statement("INSERT INTO strata_key_counters (entity, next_key) VALUES (?1, 1)")
        for entity in schema.entities {
            try counter.bind(.text(entity.name), at: 1)
            try counter.run()
        }
        return StoreMetadata(identifier: identifier, schemaVersion: schema.version)
    }

    private static func setMetadata(
        _ connection: SQLiteConnection, _ sql: String, _ key: String, _ value: StoredValue
    ) throws(StrataError) {
        let statement = try connection.statement(sql)
        try statement.bind(.text(key), at: 1)
        try statement.bind(value, at: 2)
        try statement.run()
    }

    /// The store's identifier and schema version from `strata_metadata` (also read by the
    /// store inspection of tools, so that both judge a store's metadata alike).
    /// - Throws: `.notAStore` for another format version, `.storeCorrupt` for a missing value.
    static func readMetadata(_ connection: SQLiteConnection) throws(StrataError) -> StoreMetadata {
        let path = connection.path
        let select = "SELECT value FROM strata_metadata WHERE key = ?1"
        guard let format = try connection.queryInt64(select, [.text("format_version")]) else {
            throw .storeCorrupt("\(path): strata_metadata has no format_version")
        }
        guard format == formatVersion else {
            throw .notAStore(
                path: path,
                reason: "its Strata SQLite format version is \(format); this build reads version \(formatVersion)")
        }
        guard let uuidText = try connection.queryText(select, [.text("store_uuid")]),
            let identifier = UUID(uuidString: uuidText)
        else {
            throw .storeCorrupt("\(path): strata_metadata has no valid store_uuid")
        }
        // Read with its type: written as an integer of at least 1 (a schema's version); anything
        // else, which SQLite would read as a number (text as 0), is damage, not a store to migrate.
        guard
            let stored = try connection.queryText(
                "SELECT typeof(value) || ' ' || quote(value) FROM strata_metadata WHERE key = ?1",
                [.text("schema_version")]),
            !stored.hasPrefix("null ")
        else {
            throw .storeCorrupt("\(path): strata_metadata has no schema_version")
        }
        guard stored.hasPrefix("integer "), let version = Int64(stored.dropFirst(8)), version >= 1 else {
            throw .storeCorrupt(
                """
                \(path): strata_metadata's schema_version is \(stored), not a version of 1 or more. \
                Restore the store from a backup, or set it to the version of the model that wrote it
                """)
        }
        return StoreMetadata(identifier: identifier, schemaVersion: Int(clamping: version))
    }

    /// Checks that every entity has a key counter (stores are created with all of them); run
    /// once the store's schema is known to be the model's.
    private static func checkKeyCounters(_ connection: SQLiteConnection, schema: StoreSchema) throws(StrataError) {
        for entity in schema.entities {
            guard
                try connection.queryInt64(
                    "SELECT count(*) FROM strata_key_counters WHERE entity = ?1", [.text(entity.name)]) == 1
            else {
                throw .storeCorrupt("\(connection.path): strata_key_counters has no row for entity \(entity.name)")
            }
        }
    }
}
