public import Strata

extension Schema {
    /// The ledger's schema: ``Account`` and ``Transaction``, version 2 (``LedgerSchemaV2``).
    ///
    /// Open stores with ``Strata/PersistentContainer/init(ledger:progress:)``, which migrates a
    /// version 1 store with ``LedgerMigrationPlan``. `PersistentContainer(schema: .ledger, engine:)`
    /// would migrate it by inference alone, leaving the migrated transactions' categories empty.
    ///
    /// ```swift
    /// let container = try PersistentContainer(ledger: .sqlite(at: storeURL))
    /// let accounts = AccountService(contexts: container)
    /// ```
    public static let ledger: Schema = {
        do {
            return try LedgerSchemaV2.schema()
        } catch {
            // The model classes are fixed at compile time; a failure here is a programming error.
            fatalError("the ledger schema is invalid: \(error)")
        }
    }()
}
