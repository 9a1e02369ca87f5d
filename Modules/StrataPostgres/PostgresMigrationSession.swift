import Foundation
import StrataStorage

/// The PostgreSQL side of a migration: the open's connection while its transaction (holding the
/// store's advisory lock) is open, handed to
/// ``StoreSchema/reconcileRecorded(storeVersion:recordedJSON:path:session:)``.
///
/// The seam for the migration work (design notes §11): `apply` runs each step's DDL and fills in
/// this transaction through ``session`` (``PostgresSession/run(_:_:phase:)``, binary parameters),
/// with the layout of the target schema from ``PostgresTableLayout``/``PostgresJoinLayout``; the
/// open commits afterwards, or rolls back when anything throws. Not built yet: every migration
/// is refused with `.misuse`, having changed nothing.
struct PostgresMigrationSession: StoreMigrationSession {
    /// The open's session, inside its transaction.
    let session: PostgresSession
    /// The store's schema name (unquoted) and identifier.
    let schemaName: String
    let storeIdentifier: UUID

    func apply(
        _ plan: SchemaMigrationPlan, to schema: StoreSchema, progress: MigrationRowProgress
    ) throws(StrataError) {
        throw .misuse(
            """
            \(session.store): this store needs a migration to schema version \(schema.version), and migrations are \
            not built yet for PostgreSQL stores; nothing was changed
            """)
    }

    func transactionEngine(for schema: StoreSchema) throws(StrataError) -> any StorageEngine {
        throw .misuse("\(session.store): migrations are not built yet for PostgreSQL stores; nothing was changed")
    }
}
