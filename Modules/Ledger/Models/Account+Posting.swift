import Foundation
import Strata

extension Account {
    /// Adds `transaction` to this account and brings the balances up to date, cheaply when it
    /// is the newest.
    ///
    /// When no transaction of the account is dated after it (the usual case for new money
    /// movements), only its running balance and the account's ``balance`` change and the
    /// history is not loaded. Otherwise this falls back to ``recalculateBalances()``.
    ///
    /// ```swift
    /// let coffee = Transaction(context: context)
    /// coffee.amount = -450
    /// try account.post(coffee)
    /// try context.save()
    /// ```
    ///
    /// Lifetime rule: call it inside the `perform` of the context both objects belong to.
    /// - Throws: ``LedgerError/insufficientFunds(account:available:attemptedBalance:currency:)``
    ///   when the account forbids overdraft and the balance would go negative,
    ///   ``LedgerError/invalidAmount(_:reason:)`` on 64-bit overflow, and storage errors from
    ///   the check for later transactions. The transaction is linked to the account even when
    ///   this throws; discard the context.
    public func post(_ transaction: Transaction) throws {
        transaction.account = self
        guard let context = managedObjectContext else { return try recalculateBalances() }
        let accountID = objectID
        let date = transaction.date
        let later = try context.count(
            for: FetchRequest<Transaction>(
                predicate: #Predicate { $0.$account == accountID && $0.date > date }))
        guard later == 0 else { return try recalculateBalances() }

        let (newBalance, overflow) = balance.addingReportingOverflow(transaction.amount)
        guard !overflow else {
            throw LedgerError.invalidAmount(
                MinorUnits.format(transaction.amount),
                reason: "the balance of \(name) would pass the largest a ledger holds, \(MinorUnits.format(.max))")
        }
        if !allowsOverdraft && newBalance < 0 {
            throw LedgerError.insufficientFunds(
                account: name, available: balance, attemptedBalance: newBalance, currency: currency)
        }
        transaction.runningBalance = newBalance
        balance = newBalance
    }
}
