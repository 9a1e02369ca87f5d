import Foundation
import StrataStorage
import Synchronization

/// The SQLite ``StorageEngine``: one writer connection, a pool of read connections, WAL mode.
///
/// Created through ``Strata/EngineConfiguration/sqlite(at:options:)``.
final class SQLiteEngine: StorageEngine, UnfinishedCopyAtOpen {
    let storeIdentifier: UUID
    let schemaVersion: Int
    /// Whether the store carried the unfinished-copy mark when it was opened: read in the open's
    /// transaction, so that the check takes no reader of its own.
    let wasUnfinishedCopyAtOpen: Bool
    let schema: StoreSchema
    let path: String
    let options: SQLiteOptions
    /// `options.busyTimeout` in nanoseconds and in whole milliseconds, computed once.
    let busyTimeoutNanoseconds: UInt64
    let busyTimeoutMilliseconds: Int32
    let tables: [SQLiteTableLayout]
    let joins: [SQLiteJoinLayout]

    /// The single writer connection, one write at a time (see ``withWriter(_:)``).
    let writer: SQLiteWriterLock
    /// Commits waiting for the writer connection, taken together by the one that gets it.
    let commitQueue = SQLiteCommitQueue()
    /// Commits that ran in a transaction shared with other commits (group commit; for tests).
    let groupedCommits = Atomic<Int>(0)
    /// Per entity: keys reserved in the store but not handed out yet. Apart from the writer, so
    /// that handing out reserved keys never waits for a write.
    let keyBlocks = Mutex<[Int: Range<Int64>]>([:])
    /// Idle read connections.
    private let pool: Mutex<PoolState>

    private struct PoolState {
        var idle: [SQLiteConnection] = []
        var closed = false
    }

    /// Opens or creates the store at `url`, migrating an older store in the opening transaction.
    /// - Throws: `.notAStore`, `.schemaMismatch`, `.storeNewerThanModel`, `.invalidSchema`, `.io`,
    ///   `.busy`, `.storeCorrupt`; a migration's `.migrationNotInferable`, `.migrationStageFailed`,
    ///   `.constraintViolation`.
    init(url: URL, schema: StoreSchema, options: SQLiteOptions) throws(StrataError) {
        try validateLayout(schema)
        let path = url.path(percentEncoded: false)
        self.path = path
        self.schema = schema
        self.options = options
        busyTimeoutNanoseconds = options.busyTimeoutNanoseconds
        busyTimeoutMilliseconds = options.busyTimeoutMilliseconds
        tables = schema.entities.map(SQLiteTableLayout.init(entity:))
        joins = schema.joins.map { SQLiteJoinLayout(join: $0, entityCount: schema.entities.count) }
        var createInPlace = false
        if try !Self.probeFile(at: path) {
            let outcome = try Self.createStoreFile(
                at: path, schema: schema, tables: tables, joins: joins, options: options)
            switch outcome {
            case .inPlace: try Self.probeFile(at: path)
            case .linksUnsupported: createInPlace = true
            }
        }
        let connection = try SQLiteConnection(
            path: path, readOnly: false, create: createInPlace, busyTimeout: options.busyTimeoutMilliseconds,
            maximumVariables: options.maximumVariables)
        do throws(StrataError) {
            if !createInPlace { try Self.checkHeader(connection) }
            let metadata = try Self.prepareStore(
                connection, schema: schema, tables: tables, joins: joins, options: options)
            storeIdentifier = metadata.identifier
            schemaVersion = metadata.schemaVersion
            wasUnfinishedCopyAtOpen = metadata.isUnfinishedCopy
        } catch {
            connection.close()
            throw error
        }
        writer = SQLiteWriterLock(connection)
        pool = Mutex(PoolState())
    }

    deinit { close() }

    func makeReader() throws -> any StoreReader {
        let connection = try checkOutReader()
        do throws(StrataError) {
            return try SQLiteReader(engine: self, connection: connection)
        } catch {
            connection.close()
            throw error
        }
    }

    /// Runs `body` with the writer connection, serialised with every other write of this engine.
    ///
    /// The busy timeout bounds the whole wait of the call, from the moment it is made: the wait
    /// for this process's earlier writes to hand over the connection, then SQLite's wait for
    /// another connection's lock (its busy handler gets only the time left, set per call when it
    /// changed). A free connection costs no clock read.
    /// - Throws: `.busy` when the timeout passes while earlier writes of this process hold the
    ///   connection; `.misuse` after ``close()``; or what `body` throws.
    func withWriter<T>(_ body: (SQLiteConnection) throws(StrataError) -> T) throws(StrataError) -> T {
        try writer.withConnection(waitingAtMost: busyTimeoutNanoseconds, timedOut: queuedTooLong) {
            (connection, remaining) throws(StrataError) -> T in
            guard let connection else { throw Self.closedError(path) }
            let left =
                remaining == busyTimeoutNanoseconds ? busyTimeoutMilliseconds : SQLiteOptions.milliseconds(remaining)
            connection.setBusyTimeout(milliseconds: left)
            let result = try body(connection)
            checkpointIfDue(connection)
            return result
        }
    }

    /// The error of a write whose busy timeout passed while earlier writes of this process held
    /// the writer connection.
    private func queuedTooLong() -> StrataError {
        .busy(
            """
            \(path): this write waited longer than the busy timeout (\(options.busyTimeout)) for the store's \
            writer connection, held by earlier writes of this process (which wait in turn for another \
            connection's lock, or run long). If this happens often, raise SQLiteOptions.busyTimeout
            """
        )
    }

    static func closedError(_ path: String) -> StrataError {
        .misuse("the SQLite store at \(path) was closed; open a new PersistentContainer to use it again")
    }

    /// An idle read connection, or a new one when none is idle (readers never wait).
    func checkOutReader() throws(StrataError) -> SQLiteConnection {
        let taken: SQLiteConnection?? = pool.withLock { state in
            state.closed ? .none : .some(state.idle.popLast())
        }
        guard let idle = taken else { throw Self.closedError(path) }
        if let idle { return idle }
        return try SQLiteConnection(
            path: path, readOnly: true, busyTimeout: options.busyTimeoutMilliseconds,
            maximumVariables: options.maximumVariables)
    }

    /// Returns a reader's connection (with no open transaction) to the pool, or closes it.
    func checkIn(_ connection: SQLiteConnection) {
        let surplus: SQLiteConnection? = pool.withLock { state in
            if state.closed || state.idle.count >= options.readerCount || connection.inTransaction { return connection }
            state.idle.append(connection)
            return nil
        }
        surplus?.close()
    }

    func close() {
        // The readers first: SQLite folds the write-ahead log into the database file (and removes
        // it) only when the last connection to close can checkpoint, which a read-only one cannot.
        // Closed after the readers, the writer is that last connection (unless a reader is still
        // checked out, or another process has the store open).
        let idle: [SQLiteConnection] = pool.withLock { state in
            state.closed = true
            defer { state.idle.removeAll() }
            return state.idle
        }
        for connection in idle { connection.close() }
        if let connection = writer.close() { closeWriter(connection) }
        // Nothing can refill the blocks now; an empty cache sends allocateKeys to the closed writer.
        keyBlocks.withLock { $0.removeAll() }
    }

    /// The layout of an entity, or `.misuse` when the number is out of range.
    func table(_ entity: Int) throws(StrataError) -> SQLiteTableLayout {
        guard tables.indices.contains(entity) else {
            throw .misuse("entity number \(entity) is not in the schema (it has \(tables.count) entities)")
        }
        return tables[entity]
    }

    /// The layout of a join, or `.misuse` when the number is out of range.
    func join(_ number: Int) throws(StrataError) -> SQLiteJoinLayout {
        guard joins.indices.contains(number) else {
            throw .misuse("join number \(number) is not in the schema (it has \(joins.count) joins)")
        }
        return joins[number]
    }
}
