public import Strata

extension Schema {
    /// The ledger's schema: ``Account`` and ``Transaction``, version 1.
    ///
    /// ```swift
    /// let container = try PersistentContainer(schema: .ledger, engine: .sqlite(at: storeURL))
    /// let accounts = AccountService(contexts: container)
    /// ```
    public static let ledger: Schema = {
        do {
            return try Schema(version: 1, [Account.self, Transaction.self])
        } catch {
            // The model classes are fixed at compile time; a failure here is a programming error.
            fatalError("the ledger schema is invalid: \(error)")
        }
    }()
}
