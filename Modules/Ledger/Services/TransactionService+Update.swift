import Strata

extension TransactionService {
    /// Saves an edited transaction: its amount, note, category and date, and its account. When
    /// `transaction.accountID` differs from `originalAccountID`, the transaction moves to that
    /// account and **both** accounts' balances are recalculated in the same `perform` and the
    /// same save: either both balances change or neither does.
    ///
    /// ```swift
    /// var coffee = try await transactions.transaction(coffeeURI)
    /// let original = coffee.accountID
    /// coffee.accountID = wallet.id                   // it was paid in cash
    /// let moved = try await transactions.update(transaction: coffee, originalAccountID: original)
    /// ```
    /// - Parameters:
    ///   - transaction: the edited record; `id` names the transaction, `accountID` its account
    ///     from now on. Its `runningBalance` is ignored (it is recalculated).
    ///   - originalAccountID: the URI of the account it belonged to when the record was read.
    ///     If it has moved since, its current account is recalculated too.
    /// - Returns: the saved transaction.
    /// - Throws: ``LedgerError/invalidAmount(_:reason:)`` for zero,
    ///   ``LedgerError/currencyMismatch(source:sourceCurrency:target:targetCurrency:)`` when the
    ///   new account has another currency,
    ///   ``LedgerError/insufficientFunds(account:available:attemptedBalance:currency:)``,
    ///   ``LedgerError/invalidURI(_:reason:)``, ``LedgerError/unknownTransaction(_:)``,
    ///   ``LedgerError/unknownAccount(_:)``, and storage errors (`StrataError`). On any error
    ///   nothing is saved.
    @discardableResult
    public func update(
        transaction updated: TransactionRecord, originalAccountID: String
    ) async throws -> TransactionRecord {
        let amount = try AccountRules.nonZero(updated.amount)
        return try await contexts.performUnitOfWork { context in
            let transaction = try context.transaction(uri: updated.id)
            let oldAccount = try context.account(uri: originalAccountID)
            let newAccount = try context.account(uri: updated.accountID)
            let currentAccount = transaction.account
            let currency = currentAccount?.currency ?? oldAccount.currency
            guard newAccount.currency == currency else {
                throw LedgerError.currencyMismatch(
                    source: currentAccount?.name ?? oldAccount.name, sourceCurrency: currency,
                    target: newAccount.name, targetCurrency: newAccount.currency)
            }

            transaction.amount = amount
            transaction.note = updated.note
            transaction.category = updated.category
            transaction.date = updated.date
            if oldAccount != newAccount {
                oldAccount.transactions.remove(transaction)
                try oldAccount.recalculateBalances()
                newAccount.transactions.insert(transaction)
            }
            if let currentAccount, currentAccount != oldAccount, currentAccount != newAccount {
                // Moved by someone else since the caller read it: that account changes too.
                currentAccount.transactions.remove(transaction)
                newAccount.transactions.insert(transaction)
                try currentAccount.recalculateBalances()
            }
            try newAccount.recalculateBalances()

            try context.saveLedger()
            return TransactionRecord(transaction)
        }
    }
}
