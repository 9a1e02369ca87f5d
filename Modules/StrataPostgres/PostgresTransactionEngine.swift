import Foundation
import StrataStorage
import Synchronization

/// A ``StorageEngine`` over the transaction a migrating open holds: what a custom migration
/// stage's closures read and write through (``PostgresMigrationSession/transactionEngine(for:)``).
///
/// It is laid out as one version of the schema (which may be older than the one the store is
/// opened with), through a ``PostgresEngine`` whose own pool never connects: every statement runs
/// on the open's connection, inside its transaction. Readers run there without a `BEGIN`, so they
/// see every write made so far; a commit writes into the transaction under a savepoint, with the
/// normal commit's checks, and a failed one is undone alone (`ROLLBACK TO SAVEPOINT`). Nothing is
/// durable until the open commits. Used on the opening thread only; after ``close()`` every call,
/// and every call of its readers, throws `.misuse`.
final class PostgresTransactionEngine: StorageEngine {
    private let session: PostgresSession
    /// The layout and the commit code, over a pool that is never used (closed by ``close()``).
    private let layout: PostgresEngine
    private let closed = Mutex(false)

    /// The savepoint each commit (and key reservation) runs under.
    private static let savepoint = "strata_stage"

    var storeIdentifier: UUID { layout.storeIdentifier }
    var schemaVersion: Int { layout.schemaVersion }

    /// An engine laid out as `schema` over the transaction open on `session`.
    /// - Throws: `.invalidSchema` when `schema` cannot be laid out as PostgreSQL tables.
    init(
        session: PostgresSession, schemaName: String, schema: StoreSchema, storeIdentifier: UUID
    ) throws(StrataError) {
        try validatePostgresLayout(schema)
        self.session = session
        layout = PostgresEngine(
            metadata: PostgresEngine.StoreMetadata(identifier: storeIdentifier, schemaVersion: schema.version),
            schema: schema, pool: PostgresPool(settings: session.pool.settings, options: session.pool.options),
            tables: schema.entities.map { PostgresTableLayout(entity: $0, schemaName: schemaName) },
            joins: schema.joins.map { PostgresJoinLayout(join: $0, schemaName: schemaName) },
            names: PostgresStoreNames(schema: schemaName))
    }

    private func checkOpen() throws(StrataError) {
        if closed.withLock({ $0 }) {
            throw .misuse("this migration's transaction engine was closed (its stage is over); do not keep it")
        }
    }

    func makeReader() throws -> any StoreReader {
        try checkOpen()
        return PostgresReader(insideTransactionOf: layout, session: session)
    }

    func commit(_ changes: ChangeSet) throws {
        try checkOpen()
        try changes.refuseSetWrites("a migration stage's PostgreSQL engine")
        if changes.isEmpty { return }
        try layout.checkShape(changes)
        try inSavepoint { () throws(StrataError) in
            _ = try layout.write(changes, session: session, insertKeysReread: false)
        }
    }

    func allocateKeys(entity: Int, count: Int) throws -> Range<Int64> {
        try checkOpen()
        let table = try layout.table(entity)
        guard count >= 0 else { throw StrataError.misuse("allocateKeys needs a non-negative count, got \(count)") }
        return try inSavepoint { () throws(StrataError) -> Range<Int64> in
            try layout.reserveKeys(session, table: table, count: Int64(count))
        }
    }

    /// Ends the engine; its readers close with it (the layout's pool closes).
    func close() {
        closed.withLock { $0 = true }
        layout.close()
    }

    /// Runs `body` under a savepoint: released when it returns, rolled back to when it throws, so
    /// a failure undoes this call's writes only and the migration's transaction goes on.
    private func inSavepoint<T>(_ body: () throws(StrataError) -> T) throws(StrataError) -> T {
        try session.run("SAVEPOINT \(Self.savepoint)")
        do {
            let value = try body()
            try session.run("RELEASE SAVEPOINT \(Self.savepoint)")
            return value
        } catch {
            _ = try? session.run("ROLLBACK TO SAVEPOINT \(Self.savepoint)")
            _ = try? session.run("RELEASE SAVEPOINT \(Self.savepoint)")
            throw error
        }
    }
}
