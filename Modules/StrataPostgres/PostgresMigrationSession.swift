import Foundation
import StrataStorage

/// The PostgreSQL side of a migration: the open's connection while its transaction (holding the
/// store's advisory lock) is open, handed to
/// ``StoreSchema/reconcileRecorded(storeVersion:recordedJSON:path:session:)``.
///
/// Each stage's steps are applied by ``PostgresMigration`` with the tables and joins of that
/// stage's schema; a custom stage's closures get a ``PostgresTransactionEngine``. Everything is
/// written in the one transaction (PostgreSQL's DDL is transactional), which the open commits, or
/// rolls back when anything throws: a failed migration leaves the store exactly as it was.
struct PostgresMigrationSession: StoreMigrationSession {
    /// The open's session, inside its transaction.
    let session: PostgresSession
    /// The store's schema name (unquoted) and identifier.
    let schemaName: String
    let storeIdentifier: UUID

    func apply(
        _ plan: SchemaMigrationPlan, to schema: StoreSchema, progress: MigrationRowProgress
    ) throws(StrataError) {
        try validatePostgresLayout(schema)
        try PostgresMigration(session: session, schemaName: schemaName, schema: schema)
            .apply(plan, to: schema, progress: progress)
    }

    func transactionEngine(for schema: StoreSchema) throws(StrataError) -> any StorageEngine {
        try PostgresTransactionEngine(
            session: session, schemaName: schemaName, schema: schema, storeIdentifier: storeIdentifier)
    }
}
