import Foundation
import StrataStorage

/// The PostgreSQL side of a migration: the open's connection while its transaction (holding the
/// store's advisory lock) is open, handed to
/// ``StoreSchema/reconcileRecorded(storeVersion:recordedJSON:path:session:)``.
///
/// The seam for the migration work (design notes §11): `apply` runs each step's DDL and fills in
/// this transaction through ``session`` (``PostgresSession/run(_:_:phase:)``, binary parameters),
/// with the layout of the target schema from ``PostgresTableLayout``/``PostgresJoinLayout``; the
/// open commits afterwards, or rolls back when anything throws. Built so far: the steps that store
/// nothing (defaults, delete rules, column order) and the recording of the target schema and
/// version; every other step is refused with `.misuse`, having changed nothing.
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
        for step in plan.steps {
            switch step {
            case .changeDefault, .changeDeleteRule, .reorderColumns:
                continue // nothing stored: every statement names its columns
            default:
                throw .misuse(
                    """
                    \(session.store): this store needs a migration to schema version \(plan.target.version) \
                    (\(step)), and migrations that change tables are not built yet for PostgreSQL stores; nothing \
                    was changed
                    """)
            }
        }
        let names = PostgresStoreNames(schema: schemaName)
        try session.run(
            "UPDATE \(names.metadata) SET value = $2 WHERE key = $1",
            [.rawText("schema_version"), .rawText(String(plan.target.version))])
        try session.run(
            """
            INSERT INTO \(names.metadata) (key, value) VALUES ('schema', $1) \
            ON CONFLICT (key) DO UPDATE SET value = excluded.value
            """, [.text(try plan.target.jsonText())])
    }

    func transactionEngine(for schema: StoreSchema) throws(StrataError) -> any StorageEngine {
        throw .misuse("\(session.store): migrations are not built yet for PostgreSQL stores; nothing was changed")
    }
}
