package import Foundation
package import StrataStorage

extension EngineConfiguration {
    /// Read-only access to an existing LMDB store in `directory`, for tools without a model: its
    /// record and a walk of every named database, in read transactions, and the configuration
    /// that opens it.
    package static func lmdbInspection(at directory: URL) -> StoreInspection {
        StoreInspection(
            engineName: "lmdb", location: directory.path,
            readRecord: { try LMDBStoreInspection.readRecord(directory: directory) },
            integrityProblems: { try LMDBStoreInspection.integrityProblems(directory: directory) },
            readHistorySummary: { try LMDBStoreInspection.historySummary(directory: directory) },
            configuration: .lmdb(at: directory),
            structuralProblems: { try LMDBStoreInspection.structuralProblems(directory: directory) })
    }
}

/// The read transactions behind ``StrataStorage/EngineConfiguration/lmdbInspection(at:)``.
enum LMDBStoreInspection {
    /// Named databases an inspection may open: far more than any store has.
    private static let databaseLimit = 4096

    /// The store's metadata, nil when the directory or its `data.mdb` is missing.
    /// - Throws: `.notAStore` for a file (or a FIFO, a device), or an environment without Strata metadata;
    ///   `.storeCorrupt` for incomplete metadata or a damaged data file.
    static func readRecord(directory: URL) throws(StrataError) -> StoreRecord? {
        guard let kind = SystemCalls.fileKind(atPath: directory.path) else { return nil }
        guard kind == .directory else { throw LMDBFileCheck.notADirectory(directory.path, kind) }
        guard FileManager.default.fileExists(atPath: directory.appendingPathComponent("data.mdb").path) else {
            return nil
        }
        return try withSnapshot(directory) { txn in
            let meta: LMDBDatabase
            do throws(LMDBError) {
                meta = try txn.openDatabase(LMDBCatalog.metaName, create: false)
            } catch .notFound, .incompatible {
                throw StrataError.notAStore(
                    path: directory.path, reason: "the LMDB environment holds no Strata metadata")
            }
            let metadata = try LMDBCatalog.readMetadata(txn, meta: meta, path: directory.path)
            let json = try txn.get(meta, LMDBCatalog.recordedSchemaKey) {
                String(decoding: IndexKeyCodec.array($0), as: UTF8.self)
            }
            return StoreRecord(
                identifier: metadata.storeIdentifier, schemaVersion: metadata.schemaVersion, recordedJSON: json)
        }
    }

    /// Walks every entry of every named database with a cursor (which reads every page LMDB
    /// reaches) and compares what it found with the database's own entry count.
    static func integrityProblems(directory: URL) throws(StrataError) -> [String] {
        try withSnapshot(directory) { txn in
            let main = try txn.openDatabase(nil, create: false)
            var names: [String] = []
            try txn.scan(main) { key, _ in
                names.append(String(decoding: IndexKeyCodec.array(key), as: UTF8.self))
                return true
            }
            var problems: [String] = []
            for name in names {
                do {
                    let database = try txn.openDatabase(name, create: false)
                    var walked = 0
                    try txn.scan(database) { _, _ in
                        walked += 1
                        return true
                    }
                    let counted = try txn.count(database)
                    if walked != counted {
                        problems.append(
                            "database \(name): its statistics count \(counted) entries, a walk found \(walked)")
                    }
                } catch {
                    problems.append("database \(name): \(strataError(error, "walking \(name)"))")
                }
            }
            return problems
        }
    }

    /// The page audit (``LMDBPageAudit``) of the store's newest snapshot, pinned by a read
    /// transaction meanwhile; none when the directory holds no `data.mdb`.
    /// - Throws: the errors of opening the environment (``LMDBRegistry/acquire(directory:options:databases:)``
    ///   checks the data file first: `.notAStore`, `.storeCorrupt` for a truncated one), `.busy`
    ///   when writers commit faster than a snapshot can be pinned, `.io`.
    static func structuralProblems(directory: URL) throws(StrataError) -> [String] {
        let path = directory.appendingPathComponent("data.mdb").path
        guard SystemCalls.isDirectory(atPath: directory.path) == true, FileManager.default.fileExists(atPath: path)
        else { return [] }
        // Two commits between the read's begin and the meta page's read overwrite the meta
        // page of its snapshot: then pin a newer one.
        for _ in 0..<8 {
            let found = try withSnapshot(directory) { txn in
                try LMDBPageAudit.problems(dataFile: path, snapshot: txn.id)
            }
            if let found { return found }
        }
        throw .busy(
            """
            the page audit of \(directory.path) could not pin a snapshot: writers committed faster than it \
            could read one. Run it again when the store is quieter
            """)
    }

    /// How many history transactions `strata.history` keeps (its entry count) and its oldest
    /// token (its first key), in one read transaction that decodes none; an empty summary for a
    /// store made before history.
    static func historySummary(directory: URL) throws(StrataError) -> HistorySummary {
        try withSnapshot(directory) { txn in
            let history: LMDBDatabase
            do throws(LMDBError) {
                history = try txn.openDatabase(LMDBEngine.historyName, create: false)
            } catch .notFound {
                return HistorySummary(transactions: 0, oldestToken: nil)
            }
            var oldest: Int64?
            try txn.scan(history) { key, _ in
                oldest = try LMDBEngine.historyToken(key)
                return false
            }
            return HistorySummary(transactions: try txn.count(history), oldestToken: oldest)
        }
    }

    /// Runs `body` in a read transaction of the store's environment, opened for the call.
    static func withSnapshot<T>(
        _ directory: URL, _ body: (LMDBTransaction) throws -> T
    ) throws(StrataError) -> T {
        try withEnvironment(directory) { environment in
            let txn = try environment.beginRead()
            defer { environment.endRead(txn) }
            return try environment.withReadOperation { try body(txn) }
        }
    }

    /// Runs `body` with the store's environment, held for the call (tools: inspection, copies).
    ///
    /// Unless `writing`, a store whose files this process cannot write is opened read-only
    /// (``LMDBAccess/forReading(directory:)``): a backup or an inspection only reads, so a store on
    /// read-only media, or another user's, can still be read. Read without LMDB's locks (a
    /// `lock.mdb` it cannot write), `body`'s result stands only if no writer could have overtaken
    /// it (``LMDBAccess/guardUnlockedRead(of:_:)``).
    static func withEnvironment<T>(
        _ directory: URL, writing: Bool = false, _ body: (LMDBEnvironment) throws -> T
    ) throws(StrataError) -> T {
        let environment = try LMDBRegistry.acquire(
            directory: directory, options: LMDBOptions(), databases: databaseLimit, reading: !writing)
        defer { LMDBRegistry.release(environment) }
        func run() throws(StrataError) -> T {
            do {
                return try body(environment)
            } catch {
                throw strataError(error, "reading \(directory.path)")
            }
        }
        guard environment.access == .readOnlyUnlocked else { return try run() }
        return try LMDBAccess.guardUnlockedRead(of: directory.appendingPathComponent("data.mdb").path, run)
    }
}
