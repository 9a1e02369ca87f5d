public import Foundation
public import Strata

/// Deletes old transactions while keeping every balance: what `ledger purge --before DATE` does.
///
/// The transactions dated before the cut-off are deleted, with their ``ImportLine``s (the
/// cascade rule of ``Transaction/source``), and each account's purged amounts are added to its
/// ``Account/openingBalance`` in the same save, so its ``Account/balance`` does not change and
/// `openingBalance + sum(remaining amounts) == balance` still holds. The remaining transactions
/// are all dated on or after the cut-off, so their running balances stay right too.
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
    /// - Throws: ``LedgerError/invalidAmount(_:reason:)`` when an opening balance would overflow
    ///   64 bits, and storage errors (`StrataError`). On any error nothing is written.
    @discardableResult
    public func purge(before cutoff: Date) async throws -> PurgeSummary {
        try await contexts.performUnitOfWork { context in
            let old = try context.fetch(FetchRequest<Transaction>(predicate: #Predicate { $0.date < cutoff }))
            var moved: [ObjectID: (account: Account, count: Int, sum: Int64)] = [:]
            var importLines = 0
            for transaction in old {
                if transaction.source != nil { importLines += 1 }
                guard let account = transaction.account else { continue }
                let entry = moved[account.objectID] ?? (account, 0, 0)
                let (sum, overflow) = entry.sum.addingReportingOverflow(transaction.amount)
                guard !overflow else { throw Self.overflow(account, transaction.amount) }
                moved[account.objectID] = (account, entry.count + 1, sum)
            }
            var lines: [PurgeSummary.AccountLine] = []
            for (account, count, sum) in moved.values.sorted(by: { $0.account.name < $1.account.name }) {
                let (opening, overflow) = account.openingBalance.addingReportingOverflow(sum)
                guard !overflow else { throw Self.overflow(account, sum) }
                account.openingBalance = opening
                lines.append(
                    PurgeSummary.AccountLine(
                        account: account.name, transactionsDeleted: count, movedToOpeningBalance: sum,
                        openingBalance: opening, balance: account.balance))
            }
            for transaction in old { context.delete(transaction) }
            try context.saveLedger()
            return PurgeSummary(
                before: cutoff, transactionsDeleted: old.count, importLinesDeleted: importLines, accounts: lines)
        }
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
