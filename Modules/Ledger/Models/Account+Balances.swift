import Strata

extension Account {
    /// Recomputes every transaction's running balance, oldest first, and the account's
    /// ``balance``, from ``openingBalance`` and the transactions as this context sees them
    /// (unsaved changes included).
    ///
    /// Call it after adding, removing, moving or changing a transaction, before saving. Only
    /// values that change are written, so an unchanged history costs no writes.
    ///
    /// ```swift
    /// transaction.account = newAccount
    /// try oldAccount.recalculateBalances()
    /// try newAccount.recalculateBalances()
    /// try context.save()
    /// ```
    ///
    /// Lifetime rule: call it inside the `perform` of the account's context.
    /// - Throws: ``LedgerError/insufficientFunds(account:available:attemptedBalance:currency:)``
    ///   when the account does not allow overdraft and the new balance would be negative (the
    ///   balances are left as they were, and nothing should be saved), and
    ///   ``LedgerError/invalidAmount(_:reason:)`` when the sum overflows 64 bits.
    public func recalculateBalances() throws {
        try recalculateBalances { ordered, index in
            LedgerError.invalidAmount(
                MinorUnits.format(ordered[index].amount),
                reason: "the balance of \(name) would pass the largest a ledger holds, \(MinorUnits.format(.max))")
        }
    }

    /// ``recalculateBalances()``, with the error of a running balance past `Int64` made by
    /// `overflow` from the transactions oldest first and the index of the one it passed at.
    func recalculateBalances(overflow: (_ ordered: [Transaction], _ index: Int) -> LedgerError) throws {
        let ordered = chronologicalTransactions
        var running = openingBalance
        var runningBalances: [Int64] = []
        runningBalances.reserveCapacity(ordered.count)
        for (index, transaction) in ordered.enumerated() {
            let (sum, overflowed) = running.addingReportingOverflow(transaction.amount)
            guard !overflowed else { throw overflow(ordered, index) }
            running = sum
            runningBalances.append(running)
        }
        if !allowsOverdraft && running < 0 {
            throw LedgerError.insufficientFunds(
                account: name, available: balance, attemptedBalance: running, currency: currency)
        }
        for (transaction, runningBalance) in zip(ordered, runningBalances)
        where transaction.runningBalance != runningBalance {
            transaction.runningBalance = runningBalance
        }
        if balance != running { balance = running }
    }

    /// The transactions oldest first: by date; ties by primary key, unsaved ones last in
    /// insertion order. Call inside `perform`.
    var chronologicalTransactions: [Transaction] {
        transactions.allObjects.enumerated()
            .map {
                (
                    transaction: $0.element, date: $0.element.date, key: $0.element.objectID.primaryKey ?? .max,
                    offset: $0.offset
                )
            }
            .sorted { ($0.date, $0.key, $0.offset) < ($1.date, $1.key, $1.offset) }
            .map(\.transaction)
    }
}
