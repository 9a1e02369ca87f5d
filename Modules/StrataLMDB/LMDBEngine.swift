import Foundation
import StrataStorage
import Synchronization

/// The LMDB `StorageEngine`. Created through `EngineConfiguration.lmdb(at:options:)`.
///
/// Reads run on `MDB_RDONLY` snapshots (``LMDBReader``); commits and key allocation run as write
/// transactions on the environment's writer thread (``LMDBEnvironment/write(_:_:)``).
final class LMDBEngine: StorageEngine, UnfinishedCopyAtOpen {
    let storeIdentifier: UUID
    let schemaVersion: Int
    let wasUnfinishedCopyAtOpen: Bool
    let environment: LMDBEnvironment
    let catalog: LMDBCatalog
    /// The model's schema the store was opened with (names for the history of set writes).
    let schema: StoreSchema
    /// The `strata.history` database (see `LMDBEngine+History.swift`).
    let historyDatabase: LMDBDatabase
    private let closed = Mutex(false)

    private init(
        environment: LMDBEnvironment, catalog: LMDBCatalog, schema: StoreSchema, historyDatabase: LMDBDatabase,
        metadata: LMDBCatalog.Metadata
    ) {
        self.environment = environment
        self.catalog = catalog
        self.schema = schema
        self.historyDatabase = historyDatabase
        storeIdentifier = metadata.storeIdentifier
        schemaVersion = metadata.schemaVersion
        wasUnfinishedCopyAtOpen = metadata.isUnfinishedCopy
    }

    /// Opens (creating if needed) the store in `directory`.
    static func open(directory: URL, options: LMDBOptions, schema: StoreSchema) throws(StrataError) -> LMDBEngine {
        guard options.initialMapSize > 0, options.maximumMapSize >= options.initialMapSize,
            options.maxMapGrowthRetries >= 0, options.maxReaders > 0, options.busyTimeout >= .zero
        else {
            throw .misuse(
                """
                LMDBOptions need 0 < initialMapSize <= maximumMapSize, maxMapGrowthRetries >= 0, maxReaders > 0 \
                and busyTimeout >= 0
                """
            )
        }
        let databases = LMDBCatalog.databaseCount(schema)
        let createdDirectory = try LMDBFileCheck.prepareDirectory(directory)
        // One process at a time checks, opens and (for a new store) creates the store, so a
        // process never reads a data file another one is still creating.
        let openLock = LMDBFileLock(directory: directory, name: LMDBFileLock.openLockName)
        try openLock?.lock(timeout: options.busyTimeout, waitingFor: "another process opening or creating the store")
        defer { openLock?.unlock() }
        // A creation that fails is undone, so that a retry (after freeing space) starts afresh.
        let creation = LMDBStoreCreation(directory: directory, createdDirectory: createdDirectory)
        let environment: LMDBEnvironment
        do {
            environment = try LMDBRegistry.acquire(directory: directory, options: options, databases: databases)
        } catch {
            creation.undo()
            throw error
        }
        do {
            let path = directory.path
            let maxKeySize = environment.maxKeySize
            let (catalog, metadata, history) = try environment.write("opening \(path)") { txn in
                let (catalog, metadata) = try LMDBCatalog.open(txn, schema: schema, path: path, maxKeySize: maxKeySize)
                return (catalog, metadata, try openHistory(txn))
            }
            return LMDBEngine(
                environment: environment, catalog: catalog, schema: schema, historyDatabase: history, metadata: metadata
            )
        } catch {
            LMDBRegistry.release(environment)
            creation.undo()
            throw error
        }
    }

    /// Throws `.misuse` once the engine is closed.
    func checkOpen() throws(StrataError) {
        if closed.withLock({ $0 }) { throw Self.closedError(environment.path) }
    }

    func entity(_ number: Int) throws(StrataError) -> LMDBCatalog.Entity {
        guard catalog.entities.indices.contains(number) else {
            throw .misuse("no entity number \(number) in this store's schema")
        }
        return catalog.entities[number]
    }

    /// Begins a read snapshot.
    ///
    /// The reader is counted as a user of the environment under the same lock that ``close()``
    /// takes, so the environment cannot shut down between the "is it closed?" check and the
    /// reader's first LMDB call: a reader either starts on an environment that stays open until
    /// it is closed, or gets `.misuse`.
    func makeReader() throws -> any StoreReader {
        try closed.withLock { (closed) throws(StrataError) in
            if closed { throw Self.closedError(environment.path) }
            LMDBRegistry.retain(environment)
        }
        return try LMDBReader(engine: self)
    }

    /// Runs `body` on a read snapshot of its own, begun and ended here (counted as a user of
    /// the environment like a reader, so a concurrent ``close()`` cannot shut it down meanwhile).
    func withSnapshot<T>(_ body: (LMDBTransaction) throws -> T) throws -> T {
        try closed.withLock { (closed) throws(StrataError) in
            if closed { throw Self.closedError(environment.path) }
            LMDBRegistry.retain(environment)
        }
        defer { LMDBRegistry.release(environment) }
        let txn = try environment.beginRead()
        defer { environment.endRead(txn) }
        do {
            return try environment.withReadOperation { try body(txn) }
        } catch {
            throw strataError(error, "reading \(environment.path)")
        }
    }

    static func closedError(_ path: String) -> StrataError {
        .misuse("the LMDB store at \(path) was closed; open a new PersistentContainer to use it again")
    }

    /// Commits `changes`, set writes included (their results are dropped; see
    /// ``commitReturningResults(_:)`` in `LMDBEngine+SetWrites.swift`).
    func commit(_ changes: ChangeSet) throws {
        _ = try commitReturningResults(changes)
    }

    func allocateKeys(entity number: Int, count: Int) throws -> Range<Int64> {
        try checkOpen()
        guard count >= 0 else { throw StrataError.misuse("allocateKeys needs a count >= 0, got \(count)") }
        let entity = try entity(number)
        let name = entity.name
        if let range = environment.keyCache.withLock({ cache -> Range<Int64>? in
            guard let cached = cache[name], cached.count >= count else { return nil }
            cache[name] = (cached.lowerBound + Int64(count))..<cached.upperBound
            return cached.lowerBound..<(cached.lowerBound + Int64(count))
        }) {
            return range
        }
        let block = Int64(max(count, 256))
        let catalog = catalog
        let schemaVersion = schemaVersion
        let reserved = try environment.write("allocating keys for \(name)") { txn -> Range<Int64> in
            try catalog.checkSchemaVersion(txn, schemaVersion)
            return try catalog.reserveKeys(txn, entity: entity, count: block)
        }
        let handedOut = reserved.lowerBound..<(reserved.lowerBound + Int64(count))
        environment.keyCache.withLock { $0[name] = handedOut.upperBound..<reserved.upperBound }
        return handedOut
    }

    /// Closes the engine: later reads, commits and key allocations throw `.misuse`. Readers
    /// already begun keep the environment open until they are closed; a commit already handed
    /// to the writer thread finishes first (a later one gets `.misuse` from the stopped
    /// writer). Idempotent.
    func close() {
        let wasClosed = closed.withLock { closed -> Bool in
            defer { closed = true }
            return closed
        }
        if !wasClosed { LMDBRegistry.release(environment) }
    }

    deinit {
        close()
    }
}
