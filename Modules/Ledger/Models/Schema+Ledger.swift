public import Strata

extension Schema {
    /// The ledger's schema: ``Account``, ``Transaction``, ``ImportLine`` and ``PurgedImport``,
    /// version 4 (``LedgerSchemaV4``).
    ///
    /// Open stores with ``Strata/PersistentContainer/init(ledger:progress:)``, which migrates a
    /// version 1, 2 or 3 store with ``LedgerMigrationPlan``. `PersistentContainer(schema: .ledger, engine:)`
    /// would migrate a version 1 store by inference alone, leaving its categories empty.
    ///
    /// ```swift
    /// let container = try PersistentContainer(ledger: .sqlite(at: storeURL))
    /// let accounts = AccountService(contexts: container)
    /// ```
    public static let ledger: Schema = {
        do {
            return try LedgerSchemaV4.schema()
        } catch {
            // The model classes are fixed at compile time; a failure here is a programming error.
            fatalError("the ledger schema is invalid: \(error)")
        }
    }()
}
