import Foundation
import StrataStorage

/// The SQLite side of a migration: the writer connection while the open's `BEGIN IMMEDIATE`
/// transaction is open, handed to ``StoreSchema/reconcileRecorded(storeVersion:recordedJSON:path:session:)``.
///
/// Each stage's steps are applied by ``SQLiteMigration`` with the tables and joins of that
/// stage's schema; a custom stage's closures get a ``SQLiteTransactionEngine``. Everything is
/// written in the one transaction, which the open commits, or rolls back when anything throws.
struct SQLiteMigrationSession: StoreMigrationSession {
    let connection: SQLiteConnection
    /// The store's identifier, for the object IDs of the transaction engines.
    let storeIdentifier: UUID

    func apply(
        _ plan: SchemaMigrationPlan, to schema: StoreSchema, progress: MigrationRowProgress
    ) throws(StrataError) {
        try validateLayout(schema)
        // Renames must rewrite the references to a renamed table (SQLite's default, made sure of).
        try connection.execute("PRAGMA legacy_alter_table = OFF")
        let migration = SQLiteMigration(
            connection: connection, tables: schema.entities.map(SQLiteTableLayout.init(entity:)),
            joins: schema.joins.map { SQLiteJoinLayout(join: $0, entityCount: schema.entities.count) })
        try migration.apply(plan, to: schema, progress: progress)
    }

    func transactionEngine(for schema: StoreSchema) throws(StrataError) -> any StorageEngine {
        try SQLiteTransactionEngine(connection: connection, schema: schema, storeIdentifier: storeIdentifier)
    }
}
