import Foundation
public import Strata

/// Reports over the ledger: sums of a month's transactions by category and account, computed by
/// the engine (`ObjectContext.aggregate`): no transaction object is built, and memory grows with
/// the number of groups, not of transactions.
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
    /// - Throws: ``LedgerError/reportSumOutOfRange(month:account:category:)`` when a row's amounts
    ///   add up to more than 64 bits hold (naming that row), and storage errors (`StrataError`).
    public func monthly(_ month: LedgerMonth) async throws -> MonthlyReport {
        let context = contexts.newBackgroundContext()
        let start = month.start
        let end = month.end
        let rows = try await context.perform {
            let request = FetchRequest<Transaction>(predicate: #Predicate { $0.date >= start && $0.date < end })
            guard let rows = try Self.groups(of: request, in: context) else {
                throw try Self.sumOutOfRange(in: month, context: context)
            }
            return rows
        }
        return MonthlyReport(month: month, rows: rows.sorted(by: Self.reportOrder))
    }

    /// By category (none last), then account name.
    static func reportOrder(_ a: MonthlyReport.Row, _ b: MonthlyReport.Row) -> Bool {
        let left = (a.category == nil ? 1 : 0, a.category ?? "", a.account)
        let right = (b.category == nil ? 1 : 0, b.category ?? "", b.account)
        return left < right
    }

    /// The rows of the transactions `request` selects, grouped by category and account, from
    /// aggregates computed in the engine: no transaction is fetched. Nil when a row's amounts add
    /// up to more than `Int64` holds. Call inside `perform`.
    static func groups(of request: FetchRequest<Transaction>, in context: ObjectContext) throws -> [MonthlyReport.Row]?
    {
        guard
            let groups = try context.aggregateInRange(
                request, groupedBy: [\.category, \.account], [.count, .sum(\.amount)])
        else { return nil }
        guard !groups.isEmpty else { return [] }
        let accounts = try AccountNames(in: context)
        return groups.map { group in
            let account = group.group[1].objectID.flatMap { accounts.byID[$0] }
            return MonthlyReport.Row(
                category: group.group[0].string, account: account?.name ?? "(no account)",
                currency: account?.currency ?? "", count: Int(group.values[0].integer ?? 0),
                total: group.values[1].integer ?? 0)
        }
    }

    /// The error of a month whose amounts add up to more than `Int64` holds in some row, naming
    /// the first such row. Call inside `perform`.
    private static func sumOutOfRange(in month: LedgerMonth, context: ObjectContext) throws -> LedgerError {
        let start = month.start
        let end = month.end
        let request = FetchRequest<Transaction>(predicate: #Predicate { $0.date >= start && $0.date < end })
        let group = try context.groupSummingPastRange(request, groupedBy: [\.category, \.account]) { group in
            guard let accountID = group[1].objectID else { return nil }
            let category: String? = group[0].string
            if category == nil {
                return FetchRequest(
                    predicate: #Predicate {
                        $0.date >= start && $0.date < end && $0.$account == accountID && $0.category == nil
                    })
            }
            return FetchRequest(
                predicate: #Predicate {
                    $0.date >= start && $0.date < end && $0.$account == accountID && $0.category == category
                })
        }
        let account = try group?[1].objectID.flatMap { try AccountNames(in: context).byID[$0]?.name }
        return .reportSumOutOfRange(month: month, account: account ?? "(no account)", category: group?[0].string)
    }
}

/// Every account's name and currency by ID, read as values (no account objects).
struct AccountNames {
    let byID: [ObjectID: (name: String, currency: String)]

    /// Call inside `perform`.
    init(in context: ObjectContext) throws {
        // Sorted by the unique name, so that both reads list the accounts in the same order.
        let request = FetchRequest<Account>(sortBy: [SortDescriptor(\.name)])
        let ids = try context.fetchObjectIDs(request)
        let values = try context.fetchValues(request, \.name, \.currency)
        byID = Dictionary(
            zip(ids, values.map { (name: $0.0, currency: $0.1) }), uniquingKeysWith: { first, _ in first })
    }
}
