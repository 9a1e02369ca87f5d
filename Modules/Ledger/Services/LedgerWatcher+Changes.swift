import Strata

extension LedgerWatcher {
    /// The ledger changes of one history transaction: its transactions first, then the accounts
    /// whose change no transaction line already shows. Call inside `context`'s `perform`.
    static func changes(in transaction: PersistentHistoryTransaction, context: ObjectContext) throws -> [LedgerChange] {
        var lines: [LedgerChange] = []
        var shownAccounts: Set<ObjectID> = []
        for change in transaction.changes where change.objectID.entityName == Transaction.entityName {
            if let line = try transactionChange(change, context: context, shownAccounts: &shownAccounts) {
                lines.append(line)
            }
        }
        for change in transaction.changes where change.objectID.entityName == Account.entityName {
            if let line = try accountChange(change, context: context, shownAccounts: shownAccounts) {
                lines.append(line)
            }
        }
        return lines
    }

    /// A posted, edited or removed transaction; nil for an update of its running balance alone
    /// (the account's line shows the balance).
    private static func transactionChange(
        _ change: PersistentHistoryChange, context: ObjectContext, shownAccounts: inout Set<ObjectID>
    ) throws -> LedgerChange? {
        let uri = change.objectID.uriString
        let kind: LedgerChange.Kind
        switch change.kind {
        case .delete:
            return LedgerChange(
                kind: .removed, objectID: uri, amount: change.tombstoneValue("amount", as: Int64.self),
                note: change.tombstoneValue("note", as: String.self).flatMap { $0.isEmpty ? nil : $0 })
        case .insert:
            kind = .posted
        case .update:
            if change.changedProperties.isSubset(of: ["runningBalance"]) { return nil }
            kind = .edited
        }
        guard let transaction = try existing(change.objectID, as: Transaction.self, in: context) else {
            return LedgerChange(kind: kind, objectID: uri)
        }
        let account = transaction.account
        if let account { shownAccounts.insert(account.objectID) }
        return LedgerChange(
            kind: kind, objectID: uri, account: account?.name, currency: account?.currency,
            amount: transaction.amount, balance: transaction.runningBalance,
            note: transaction.note.isEmpty ? nil : transaction.note)
    }

    /// An opened, changed or closed account; nil when a transaction line of the commit shows
    /// it, when only its list of transactions changed, or when it is gone since.
    private static func accountChange(
        _ change: PersistentHistoryChange, context: ObjectContext, shownAccounts: Set<ObjectID>
    ) throws -> LedgerChange? {
        let uri = change.objectID.uriString
        switch change.kind {
        case .delete:
            return LedgerChange(
                kind: .closed, objectID: uri, account: change.tombstoneValue("name", as: String.self),
                currency: change.tombstoneValue("currency", as: String.self))
        case .insert:
            guard let account = try existing(change.objectID, as: Account.self, in: context) else {
                return LedgerChange(kind: .opened, objectID: uri)
            }
            // Opened with no transactions: its balance was the opening balance (read now, the
            // balance may include later transactions).
            return LedgerChange(
                kind: .opened, objectID: uri, account: account.name, currency: account.currency,
                amount: account.openingBalance, balance: account.openingBalance)
        case .update:
            if shownAccounts.contains(change.objectID) || change.changedProperties.isSubset(of: ["transactions"]) {
                return nil
            }
            guard let account = try existing(change.objectID, as: Account.self, in: context) else { return nil }
            return LedgerChange(
                kind: .accountChanged, objectID: uri, account: account.name, currency: account.currency,
                balance: account.balance)
        }
    }

    /// The object, or nil when it was deleted since the commit.
    private static func existing<Object: ManagedObject>(
        _ id: ObjectID, as type: Object.Type, in context: ObjectContext
    ) throws -> Object? {
        do {
            return try context.existingObject(with: id, as: type)
        } catch StrataError.objectNotFound {
            return nil
        }
    }
}
