public import Foundation
public import Strata

/// Deletes old transactions while keeping every balance: what `ledger purge --before DATE` does.
///
/// The transactions dated before the cut-off are deleted by one batch delete, with their
/// ``ImportLine``s (the cascade rule of ``Transaction/source``, applied set-wise), and each
/// account's purged amounts, summed by the engine per account, are added to its
/// ``Account/openingBalance`` in the same save, so its ``Account/balance`` does not change and
/// `openingBalance + sum(remaining amounts) == balance` still holds. The remaining transactions
/// are all dated on or after the cut-off, so their running balances stay right too. Each purged
/// transaction that was imported leaves a ``PurgedImport`` (its external id), written by the same
/// save, so importing the same statement again skips its line instead of counting it twice.
///
/// ```swift
/// let purges = PurgeService(contexts: container)
/// let summary = try await purges.purge(before: try LedgerDay.parse("2023-01-01"))
/// for line in summary.accounts { print(line.account, MinorUnits.format(line.movedToOpeningBalance)) }
/// ```
public struct PurgeService: Sendable {
    /// Where the service gets a fresh context for each call.
    public let contexts: any ContextFactory

    /// - Parameter contexts: usually a container opened with ``Strata/PersistentContainer/init(ledger:progress:)``.
    public init(contexts: any ContextFactory) {
        self.contexts = contexts
    }

    /// Deletes every transaction dated before `cutoff`, moving its amount into its account's
    /// opening balance, in one unit of work.
    ///
    /// ```swift
    /// let summary = try await purges.purge(before: try LedgerDay.parse("2024-01-01"))
    /// print("\(summary.transactionsDeleted) deleted")
    /// ```
    /// - Parameter cutoff: transactions dated strictly before it are deleted.
    /// - Returns: what was deleted and moved; zero counts when nothing is that old.
    /// - Throws: ``LedgerError/purgeSumOutOfRange(account:before:)`` when an account's purged
    ///   amounts add up to more than 64 bits hold (purge up to an earlier day first),
    ///   ``LedgerError/invalidAmount(_:reason:)`` when an opening balance would overflow 64 bits,
    ///   and storage errors (`StrataError`). On any error nothing is written.
    @discardableResult
    public func purge(before cutoff: Date) async throws -> PurgeSummary {
        try await contexts.performUnitOfWork { context in
            let old = FetchRequest<Transaction>(predicate: #Predicate { $0.date < cutoff })
            // Per account, from the engine: how many transactions go and their sum.
            guard let groups = try context.aggregateInRange(old, groupedBy: [\.account], [.count, .sum(\.amount)])
            else { throw try Self.sumOutOfRange(before: cutoff, in: context) }
            // The batch selects its rows when the save runs: if an old transaction appeared,
            // changed or went since the sums above were read, the save conflicts and re-runs.
            try context.requireUnchangedResults(of: old)
            var lines: [PurgeSummary.AccountLine] = []
            for group in groups {
                guard let accountID = group.group[0].objectID else { continue }
                let account = try context.existingObject(with: accountID, as: Account.self)
                let sum = group.values[1].integer ?? 0
                let (opening, overflow) = account.openingBalance.addingReportingOverflow(sum)
                guard !overflow else { throw Self.overflow(account, sum) }
                // An object update of Account and a batch delete of Transaction, in one save.
                account.openingBalance = opening
                lines.append(
                    PurgeSummary.AccountLine(
                        account: account.name, transactionsDeleted: Int(group.values[0].integer ?? 0),
                        movedToOpeningBalance: sum, openingBalance: opening, balance: account.balance))
            }
            try Self.recordPurgedImports(before: cutoff, in: context)
            try context.batchDelete(Transaction.self, where: #Predicate { $0.date < cutoff })
            try context.saveLedger()
            // The second batch is the delete (the first records the purged imports).
            let deleted = context.savedBatches.last?.deletedIDs ?? []
            return PurgeSummary(
                before: cutoff,
                transactionsDeleted: deleted.filter { $0.entityName == Transaction.entityName }.count,
                importLinesDeleted: deleted.filter { $0.entityName == ImportLine.entityName }.count,
                accounts: lines.sorted { $0.account < $1.account })
        }
    }

    /// Stages one ``PurgedImport`` for each imported transaction dated before `cutoff`, so that a
    /// later import of its line skips it instead of counting its amount again (it is in the
    /// opening balance now). Written by the purge's save, with the batch delete.
    private static func recordPurgedImports(before cutoff: Date, in context: ObjectContext) throws {
        let imported = FetchRequest<Transaction>(predicate: #Predicate { $0.date < cutoff && $0.externalID != nil })
        // One group per transaction (the external id is unique): its account, day and amount.
        let groups = try context.aggregate(imported, groupedBy: [\.externalID, \.account, \.date], [.sum(\.amount)])
        var names: [ObjectID: String] = [:]
        var records: [(id: String, account: String, date: Date, amount: Int64)] = []
        for group in groups {
            guard let id = group.group[0].string, let date = group.group[2].date else { continue }
            var account = ""
            if let accountID = group.group[1].objectID {
                if names[accountID] == nil {
                    names[accountID] = try context.existingObject(with: accountID, as: Account.self).name
                }
                account = names[accountID] ?? ""
            }
            records.append((id, account, date, group.values[0].integer ?? 0))
        }
        // A record kept from an earlier purge of the same id (a transaction re-entered by hand
        // with it) is brought up to date rather than refused.
        try context.batchInsert(
            PurgedImport.self, from: records,
            onConflict: .update(matching: [\.externalID], setting: [\.date, \.amount, \.account, \.purgedBefore])
        ) { record, row in
            row[\.externalID] = record.id
            row[\.account] = record.account
            row[\.date] = record.date
            row[\.amount] = record.amount
            row[\.purgedBefore] = cutoff
        }
    }

    /// The error of a purge whose amounts add up to more than `Int64` holds on some account,
    /// naming the first such account. Call inside `perform`, before any change.
    private static func sumOutOfRange(before cutoff: Date, in context: ObjectContext) throws -> LedgerError {
        let old = FetchRequest<Transaction>(predicate: #Predicate { $0.date < cutoff })
        let group = try context.groupSummingPastRange(old, groupedBy: [\.account]) { group in
            guard let accountID = group[0].objectID else { return nil }
            return FetchRequest(predicate: #Predicate { $0.$account == accountID && $0.date < cutoff })
        }
        let account = try group?[0].objectID.map { try context.existingObject(with: $0, as: Account.self).name }
        return .purgeSumOutOfRange(account: account ?? "(no account)", before: cutoff)
    }

    private static func overflow(_ account: Account, _ amount: Int64) -> LedgerError {
        .invalidAmount(
            MinorUnits.format(amount),
            reason:
                "the opening balance of \(account.name) would pass the largest a ledger holds, "
                + MinorUnits.format(.max)
        )
    }
}
