import Foundation
import StrataStorage

/// The LMDB engine's side of a migration at open: the opening write transaction, through which
/// inferred steps are applied (``LMDBMigration``) and custom stages read and write
/// (``LMDBTransactionEngine``).
///
/// Made by ``LMDBCatalog/reconcileRecordedSchema(_:meta:schema:metadata:path:maxKeySize:)`` on
/// the writer thread, inside the transaction, and used only there until the open commits or
/// aborts.
final class LMDBMigrationSession: StoreMigrationSession {
    let txn: LMDBTransaction
    let meta: LMDBDatabase
    let storeIdentifier: UUID
    let path: String
    let maxKeySize: Int
    /// Set when a step or a custom stage's commit ran out of map. The open then throws
    /// `LMDBError.mapFull` instead of the migration's error, so that the writer grows the map
    /// and runs the whole open (the migration and its closures) again in a new transaction.
    private(set) var ranOutOfMap = false

    init(txn: LMDBTransaction, meta: LMDBDatabase, storeIdentifier: UUID, path: String, maxKeySize: Int) {
        self.txn = txn
        self.meta = meta
        self.storeIdentifier = storeIdentifier
        self.path = path
        self.maxKeySize = maxKeySize
    }

    func apply(
        _ plan: SchemaMigrationPlan, to schema: StoreSchema, progress: MigrationRowProgress
    ) throws(StrataError) {
        do {
            var migration = LMDBMigration(
                txn: txn, meta: meta, plan: plan, schema: schema, maxKeySize: maxKeySize, progress: progress)
            try migration.run()
        } catch {
            throw classify(error, "migrating \(path) to version \(schema.version)")
        }
    }

    func transactionEngine(for schema: StoreSchema) throws(StrataError) -> any StorageEngine {
        do {
            let catalog = try LMDBCatalog.build(txn, meta: meta, schema: schema)
            return LMDBTransactionEngine(session: self, catalog: catalog, schemaVersion: schema.version)
        } catch {
            throw classify(error, "opening the databases of version \(schema.version) of \(path)")
        }
    }

    /// The `StrataError` for an error met in the transaction, noting a full map (see ``ranOutOfMap``).
    func classify(_ error: any Error, _ context: String) -> StrataError {
        if let lmdb = error as? LMDBError, lmdb == .mapFull { ranOutOfMap = true }
        return strataError(error, context)
    }
}
