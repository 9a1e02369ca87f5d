import Foundation
import StrataStorage
import Synchronization

/// A ``StorageEngine`` over the write transaction that a migrating open holds: what a custom
/// migration stage's closures read and write through (``SQLiteMigrationSession/transactionEngine(for:)``).
///
/// It is laid out as one version of the schema (which may be older than the one the store is
/// opened with). Its readers read on the writer connection, inside the transaction, so they see
/// every write made so far; a commit writes into the transaction under a savepoint, with the
/// normal commit's checks, and a failed one is undone alone (`ROLLBACK TO`). Nothing is durable
/// until the open commits. Used on the opening thread only; after ``close()`` every call throws
/// `.misuse`.
final class SQLiteTransactionEngine: StorageEngine, SQLiteLayoutSource {
    let storeIdentifier: UUID
    let schemaVersion: Int
    private let connection: SQLiteConnection
    private let tables: [SQLiteTableLayout]
    let joins: [SQLiteJoinLayout]
    private let closed = Mutex(false)

    /// The savepoint each commit runs under.
    private static let savepoint = "strata_migration_commit"

    /// An engine laid out as `schema` over the transaction open on `connection`.
    /// - Throws: `.invalidSchema` when `schema` cannot be laid out as SQLite tables.
    init(connection: SQLiteConnection, schema: StoreSchema, storeIdentifier: UUID) throws(StrataError) {
        try validateLayout(schema)
        self.connection = connection
        self.storeIdentifier = storeIdentifier
        schemaVersion = schema.version
        tables = schema.entities.map(SQLiteTableLayout.init(entity:))
        joins = schema.joins.map { SQLiteJoinLayout(join: $0, entityCount: schema.entities.count) }
    }

    private func checkOpen() throws(StrataError) {
        if closed.withLock({ $0 }) {
            throw .misuse("this migration's transaction engine was closed (its stage is over); do not keep it")
        }
    }

    func table(_ entity: Int) throws(StrataError) -> SQLiteTableLayout {
        try checkOpen()
        guard tables.indices.contains(entity) else {
            throw .misuse("entity number \(entity) is not in the schema (it has \(tables.count) entities)")
        }
        return tables[entity]
    }

    func join(_ number: Int) throws(StrataError) -> SQLiteJoinLayout {
        try checkOpen()
        guard joins.indices.contains(number) else {
            throw .misuse("join number \(number) is not in the schema (it has \(joins.count) joins)")
        }
        return joins[number]
    }

    func makeReader() throws -> any StoreReader {
        try checkOpen()
        return SQLiteReader(insideTransactionOf: self, connection: connection)
    }

    func commit(_ changes: ChangeSet) throws {
        try checkOpen()
        try changes.refuseSetWrites("a migration stage's SQLite engine")
        if changes.isEmpty { return }
        try connection.execute("SAVEPOINT \(Self.savepoint)")
        do throws(StrataError) {
            try SQLiteEngine.write(changes, laidOutBy: self, into: connection)
            try connection.execute("RELEASE \(Self.savepoint)")
        } catch {
            // Undo this commit's writes only; the migration's transaction goes on.
            try? connection.execute("ROLLBACK TO \(Self.savepoint)")
            try? connection.execute("RELEASE \(Self.savepoint)")
            throw error
        }
    }

    func allocateKeys(entity: Int, count: Int) throws -> Range<Int64> {
        let table = try table(entity)
        guard count >= 0 else { throw StrataError.misuse("allocateKeys needs a non-negative count, got \(count)") }
        return try SQLiteEngine.reserveKeys(connection, table: table, count: Int64(count))
    }

    /// Ends the engine. Its statements, prepared for its layouts in the connection's slots (which
    /// are numbered per entity, whatever the schema), are dropped: the next transaction engine or
    /// the opened engine itself, laid out otherwise, prepares its own.
    func close() {
        let wasOpen = closed.withLock { closed in
            defer { closed = true }
            return !closed
        }
        if wasOpen { connection.forgetSlotStatements() }
    }
}
