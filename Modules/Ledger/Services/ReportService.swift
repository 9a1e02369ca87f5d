import Foundation
public import Strata

/// Reports over the ledger: sums of a month's transactions by category and account.
///
/// ```swift
/// let reports = ReportService(contexts: container)
/// let march = try await reports.monthly(try LedgerMonth.parse("2024-03"))
/// print(march.rows.count)
/// ```
public struct ReportService: Sendable {
    /// Where the service gets a fresh context for each call.
    public let contexts: any ContextFactory

    /// - Parameter contexts: usually a container opened with ``Strata/PersistentContainer/init(ledger:progress:)``.
    public init(contexts: any ContextFactory) {
        self.contexts = contexts
    }

    /// The transactions dated in `month` (UTC), counted and summed by category and account, read
    /// in one snapshot.
    ///
    /// ```swift
    /// let report = try await reports.monthly(try LedgerMonth.parse("2024-03"))
    /// let dining = report.rows.filter { $0.category == "dining" }.reduce(0) { $0 + $1.total }
    /// ```
    /// - Returns: one row per (category, account) with at least one transaction; no rows for an
    ///   empty month.
    /// - Throws: storage errors (`StrataError`).
    public func monthly(_ month: LedgerMonth) async throws -> MonthlyReport {
        let context = contexts.newBackgroundContext()
        let start = month.start
        let end = month.end
        let rows = try await context.perform {
            let request = FetchRequest<Transaction>(predicate: #Predicate { $0.date >= start && $0.date < end })
            return try Self.groups(of: request, in: context)
        }
        return MonthlyReport(month: month, rows: rows.sorted(by: Self.reportOrder))
    }

    /// By category (none last), then account name.
    static func reportOrder(_ a: MonthlyReport.Row, _ b: MonthlyReport.Row) -> Bool {
        let left = (a.category == nil ? 1 : 0, a.category ?? "", a.account)
        let right = (b.category == nil ? 1 : 0, b.category ?? "", b.account)
        return left < right
    }

    /// The rows of the transactions `request` selects, grouped by category and account. Call
    /// inside `perform`.
    static func groups(of request: FetchRequest<Transaction>, in context: ObjectContext) throws -> [MonthlyReport.Row] {
        struct Key: Hashable {
            var category: String?
            var account: ObjectID?
        }
        var totals: [Key: (count: Int, total: Int64)] = [:]
        var accounts: [ObjectID: Account] = [:]
        for transaction in try context.fetch(request) {
            let account = transaction.account
            if let account { accounts[account.objectID] = account }
            let key = Key(category: transaction.category, account: account?.objectID)
            let (sum, overflow) = (totals[key]?.total ?? 0).addingReportingOverflow(transaction.amount)
            guard !overflow else {
                throw LedgerError.invalidAmount(
                    MinorUnits.format(transaction.amount), reason: "the report's total would pass 64 bits")
            }
            totals[key] = ((totals[key]?.count ?? 0) + 1, sum)
        }
        return totals.map { key, value in
            let account = key.account.flatMap { accounts[$0] }
            return MonthlyReport.Row(
                category: key.category, account: account?.name ?? "(no account)", currency: account?.currency ?? "",
                count: value.count, total: value.total)
        }
    }
}
