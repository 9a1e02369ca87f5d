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
        guard try !hasTransactions(datedAfter: transaction.date, in: context) else { return try recalculateBalances() }

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

    /// The most transactions dated after a posting that ``hasTransactions(datedAfter:in:)`` reads
    /// to see whether one is this account's, before it asks the store about this account alone.
    static let laterTransactionsReadDirectly = 32

    /// Whether a transaction of this account is dated after `date`.
    ///
    /// The store is asked first how many transactions of *any* account are dated after it, which
    /// the date index answers by reading only those. A new money movement is dated now, so the
    /// answer is almost always none, and then the check costs the same however long the account's
    /// history. Asked about this account directly (`account == self && date > d`), SQLite and LMDB
    /// read the account's index and every one of its transactions to compare their dates: a
    /// transfer cost more with every transaction the account had, and concurrent transfers ran
    /// longer and conflicted more (Docs/Benchmarks.md, workload 7). Only when some transaction is
    /// later is this account's own question asked: by reading those few, or, when there are more
    /// than ``laterTransactionsReadDirectly``, of the store. That last case (a back-dated posting,
    /// or any posting while many transactions are dated in the future) pays for both counts.
    ///
    /// An account not saved yet has no stored transactions: its own, in memory, are looked at.
    private func hasTransactions(datedAfter date: Date, in context: ObjectContext) throws -> Bool {
        let accountID = objectID
        if accountID.isTemporary { return transactions.allObjects.contains { $0.date > date } }
        let laterAnywhere = FetchRequest<Transaction>(predicate: #Predicate { $0.date > date })
        let count = try context.count(for: laterAnywhere)
        guard count > 0 else { return false }
        if count <= Self.laterTransactionsReadDirectly {
            return try context.fetch(laterAnywhere).contains { $0.$account == accountID }
        }
        let later = FetchRequest<Transaction>(predicate: #Predicate { $0.$account == accountID && $0.date > date })
        return try context.count(for: later) > 0
    }
}
