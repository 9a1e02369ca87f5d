import Strata

extension TransactionService {
    /// Moves money between two accounts of the same currency: a withdrawal on `sourceURI`, a
    /// deposit on `targetURI`, and both accounts' balances, saved together in one unit of work.
    ///
    /// ```swift
    /// let receipt = try await transactions.transfer(
    ///     from: checking.id, to: savings.id, amount: 25_000, note: "Rainy day")
    /// print(receipt.withdrawal.runningBalance, receipt.deposit.runningBalance)
    /// ```
    /// Concurrent transfers over the same accounts are safe: both balances are written, so two
    /// transfers that read the same balance cannot both commit; the later one is re-run on the
    /// new balance.
    /// - Parameters:
    ///   - sourceURI: the account the money leaves.
    ///   - targetURI: the account it goes to.
    ///   - amount: positive minor units.
    ///   - note: the description of both transactions, whose category is `"transfer"`.
    /// - Returns: both saved transactions.
    /// - Throws: ``LedgerError/invalidAmount(_:reason:)`` unless `amount` is positive,
    ///   ``LedgerError/sameAccount(_:)``,
    ///   ``LedgerError/currencyMismatch(source:sourceCurrency:target:targetCurrency:)``,
    ///   ``LedgerError/insufficientFunds(account:available:attemptedBalance:currency:)`` when the
    ///   source forbids overdraft, ``LedgerError/invalidURI(_:reason:)``,
    ///   ``LedgerError/unknownAccount(_:)``, and storage errors (`StrataError`). On any error
    ///   nothing is saved.
    @discardableResult
    public func transfer(
        from sourceURI: String, to targetURI: String, amount: Int64, note: String
    ) async throws -> TransferReceipt {
        let amount = try AccountRules.positive(amount)
        return try await contexts.performUnitOfWork { context in
            let source = try context.account(uri: sourceURI)
            let target = try context.account(uri: targetURI)
            guard source != target else { throw LedgerError.sameAccount(source.name) }
            guard source.currency == target.currency else {
                throw LedgerError.currencyMismatch(
                    source: source.name, sourceCurrency: source.currency, target: target.name,
                    targetCurrency: target.currency)
            }

            let withdrawal = Transaction(context: context)
            withdrawal.amount = -amount
            withdrawal.note = note
            withdrawal.category = Transaction.transferCategory
            let deposit = Transaction(context: context)
            deposit.amount = amount
            deposit.note = note
            deposit.category = Transaction.transferCategory
            deposit.date = withdrawal.date
            try source.post(withdrawal)
            try target.post(deposit)

            try context.saveLedger()
            return TransferReceipt(withdrawal: TransactionRecord(withdrawal), deposit: TransactionRecord(deposit))
        }
    }
}
