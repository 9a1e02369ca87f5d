public import Strata

extension PersistentContainer {
    /// Opens (creating if needed) a ledger store on `engine`, migrating an older one with
    /// ``LedgerMigrationPlan``: the way to open a ledger store.
    ///
    /// ```swift
    /// let container = try PersistentContainer(ledger: .sqlite(at: storeURL)) { progress in
    ///     print("migrating: \(Int(progress.fractionCompleted * 100))%")
    /// }
    /// let transactions = TransactionService(contexts: container)
    /// ```
    /// - Parameters:
    ///   - engine: the engine and location, e.g. `.sqlite(at: url)` or `.lmdb(at: url)`.
    ///   - progress: called on the opening thread while an older store migrates (not called
    ///     when the store is new or current).
    /// - Throws: what ``Strata/PersistentContainer/init(schema:migrationPlan:engine:progress:recordsHistory:)``
    ///   throws: `StrataError.storeNewerThanModel` for a store of a later ledger,
    ///   `StrataError.schemaMismatch` for a store of another shape, `StrataError.notAStore` for
    ///   a file that is not a store of this engine, and engine errors (`.io`, `.busy`,
    ///   `.storeCorrupt`). A failed migration leaves the store as it was.
    public convenience init(
        ledger engine: EngineConfiguration, progress: (@Sendable (MigrationProgress) -> Void)? = nil
    ) throws {
        try self.init(schema: .ledger, migrationPlan: LedgerMigrationPlan.self, engine: engine, progress: progress)
    }
}
