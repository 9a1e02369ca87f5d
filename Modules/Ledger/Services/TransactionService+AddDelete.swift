public import Foundation
import Strata

extension TransactionService {
    /// Adds a transaction to an account and recalculates its balances, in one save.
    ///
    /// ```swift
    /// let rent = try await transactions.add(to: checking.id, amount: -120_000, note: "Rent")
    /// print(rent.category ?? "none")                 // "housing", suggested by the note
    /// ```
    /// - Parameters:
    ///   - accountURI: the account's URI (``AccountSnapshot/id``).
    ///   - amount: signed minor units, not zero; negative takes money out.
    ///   - note: a description.
    ///   - category: what the money was for; when nil, the one the note suggests
    ///     (``Transaction/suggestedCategory(forNote:)``), if any.
    ///   - date: when it happened; now when nil.
    /// - Returns: the saved transaction with its running balance.
    /// - Throws: ``LedgerError/invalidAmount(_:reason:)`` for zero,
    ///   ``LedgerError/insufficientFunds(account:available:attemptedBalance:currency:)``,
    ///   ``LedgerError/invalidURI(_:reason:)``, ``LedgerError/unknownAccount(_:)``, and storage
    ///   errors (`StrataError`). On any error nothing is saved.
    @discardableResult
    public func add(
        to accountURI: String, amount: Int64, note: String, category: String? = nil, date: Date? = nil
    ) async throws -> TransactionRecord {
        let amount = try AccountRules.nonZero(amount)
        return try await contexts.performUnitOfWork { context in
            let account = try context.account(uri: accountURI)
            let transaction = Transaction(context: context)
            transaction.amount = amount
            transaction.note = note
            transaction.category = category ?? Transaction.suggestedCategory(forNote: note)
            if let date { transaction.date = date }
            try account.post(transaction)
            try context.saveLedger()
            return TransactionRecord(transaction)
        }
    }

    /// Deletes a transaction and recalculates its account's balances, in one save.
    /// - Throws: ``LedgerError/insufficientFunds(account:available:attemptedBalance:currency:)``
    ///   when removing a deposit would overdraw an account that forbids it,
    ///   ``LedgerError/invalidURI(_:reason:)``, ``LedgerError/unknownTransaction(_:)``, and
    ///   storage errors.
    public func delete(transaction transactionURI: String) async throws {
        try await contexts.performUnitOfWork { context in
            let transaction = try context.transaction(uri: transactionURI)
            let account = transaction.account
            transaction.account = nil
            context.delete(transaction)
            try account?.recalculateBalances()
            try context.saveLedger()
        }
    }
}
