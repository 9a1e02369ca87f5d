public import Strata

/// Reads and changes transactions: history, add, update (including moving a transaction to
/// another account), delete, and transfers.
///
/// Every method takes a fresh context from ``contexts`` and does its whole unit of work inside
/// that context's `perform`, off the main actor. Writes end with one save, so every balance
/// they touch is saved together or not at all, and a save conflict re-runs the whole unit of
/// work in a new context (`ContextFactory.performUnitOfWork`). Only `Sendable` values and URI
/// strings cross the boundary; the service holds no context.
///
/// ```swift
/// let transactions = TransactionService(contexts: container)
/// try await transactions.add(to: checking.id, amount: -4_200, note: "Rent")
/// try await transactions.transfer(from: checking.id, to: savings.id, amount: 10_000, note: "Save")
/// for line in try await transactions.transactions(for: checking.id) {
///     print(line.date, line.note, MinorUnits.format(line.amount), MinorUnits.format(line.runningBalance))
/// }
/// ```
public struct TransactionService: Sendable {
    /// Where the service gets a fresh context for each call.
    public let contexts: any ContextFactory

    /// - Parameter contexts: usually a `PersistentContainer` opened with ``Strata/Schema/ledger``.
    public init(contexts: any ContextFactory) {
        self.contexts = contexts
    }

    /// An account's transactions, newest first, each with the running balance after it.
    ///
    /// ```swift
    /// let history = try await transactions.transactions(for: checking.id)
    /// ```
    /// - Throws: ``LedgerError/invalidURI(_:reason:)``, ``LedgerError/unknownAccount(_:)``, and
    ///   storage errors (`StrataError`).
    public func transactions(for accountURI: String) async throws -> [TransactionRecord] {
        let context = contexts.newBackgroundContext()
        return try await context.perform {
            let account = try context.account(uri: accountURI)
            return account.chronologicalTransactions.reversed().map(TransactionRecord.init)
        }
    }

    /// The transaction a URI names.
    /// - Throws: ``LedgerError/invalidURI(_:reason:)``, ``LedgerError/unknownTransaction(_:)``, and
    ///   storage errors.
    public func transaction(_ transactionURI: String) async throws -> TransactionRecord {
        let context = contexts.newBackgroundContext()
        return try await context.perform {
            TransactionRecord(try context.transaction(uri: transactionURI))
        }
    }
}
