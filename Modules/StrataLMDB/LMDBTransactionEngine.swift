import Foundation
import StrataStorage

/// A `StorageEngine` over a migration's opening write transaction, laid out as one version's
/// schema: what a custom stage's closures read and write through
/// (``LMDBMigrationSession/transactionEngine(for:)``).
///
/// - ``makeReader()``: an ``LMDBReader`` over the write transaction, which sees its writes so far.
/// - ``commit(_:)``: the normal ``LMDBCommitter`` in a transaction nested in the open's, so a
///   failed commit undoes its own writes only and throws as a normal commit does.
/// - ``allocateKeys(entity:count:)``: reserves from the key counters inside the transaction.
///
/// Used on the writer thread that runs the open only, synchronously (a call from another
/// thread throws `.misuse`); after ``close()``, and once the open is over, every call throws
/// `.misuse`. `@unchecked Sendable`: its state is touched by that one thread alone.
final class LMDBTransactionEngine: StorageEngine, @unchecked Sendable {
    let storeIdentifier: UUID
    let schemaVersion: Int
    let catalog: LMDBCatalog
    let path: String
    private let session: LMDBMigrationSession
    private let thread = pthread_self()
    private var closed = false

    init(session: LMDBMigrationSession, catalog: LMDBCatalog, schemaVersion: Int) {
        self.session = session
        self.catalog = catalog
        self.schemaVersion = schemaVersion
        storeIdentifier = session.storeIdentifier
        path = session.path
    }

    /// The open's write transaction, or `.misuse` when the engine is closed or called from
    /// another thread.
    func transaction() throws(StrataError) -> LMDBTransaction {
        guard pthread_equal(pthread_self(), thread) != 0 else {
            throw .misuse(
                """
                a migration's engine for \(path) was used from another thread: a custom stage's closures run \
                synchronously on the thread that runs the opening transaction (LMDB's writer thread)
                """
            )
        }
        guard !closed else {
            throw .misuse("a migration's engine for \(path) was used after its stage ended")
        }
        return session.txn
    }

    func makeReader() throws -> any StoreReader {
        _ = try transaction()
        return LMDBReader(transactionEngine: self)
    }

    func commit(_ changes: ChangeSet) throws {
        let txn = try transaction()
        try changes.refuseSetWrites("a migration stage's LMDB engine")
        if changes.isEmpty { return }
        let catalog = catalog
        do {
            try txn.nested { child in
                var committer = LMDBCommitter(
                    txn: child, catalog: catalog, storeIdentifier: storeIdentifier, maxKeySize: session.maxKeySize)
                try committer.apply(changes)
            }
        } catch {
            throw session.classify(error, "committing to \(path) during a migration")
        }
    }

    func allocateKeys(entity number: Int, count: Int) throws -> Range<Int64> {
        let txn = try transaction()
        guard count >= 0 else { throw StrataError.misuse("allocateKeys needs a count >= 0, got \(count)") }
        guard catalog.entities.indices.contains(number) else {
            throw StrataError.misuse("no entity number \(number) in this store's schema")
        }
        do {
            return try catalog.reserveKeys(txn, entity: catalog.entities[number], count: Int64(count))
        } catch {
            throw session.classify(error, "allocating keys in \(path) during a migration")
        }
    }

    func close() {
        closed = true
    }
}
