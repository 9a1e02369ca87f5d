/// What ``ReportService/monthly(_:)`` returns: a month's transactions summed by category and
/// account.
///
/// ```swift
/// let report = try await reports.monthly(try LedgerMonth.parse("2024-03"))
/// for row in report.rows {
///     print(row.category ?? "-", row.account, row.count, MinorUnits.format(row.total), row.currency)
/// }
/// ```
public struct MonthlyReport: Sendable, Hashable {
    /// One group: the transactions of one account with one category (nil: none).
    public struct Row: Sendable, Hashable {
        /// The category; nil for transactions without one.
        public var category: String?
        /// The account's name.
        public var account: String
        /// The account's currency (totals of different currencies are never added).
        public var currency: String
        /// How many transactions.
        public var count: Int
        /// Their amounts' sum, in minor units.
        public var total: Int64

        /// A row; the report service makes these for you.
        public init(category: String?, account: String, currency: String, count: Int, total: Int64) {
            self.category = category
            self.account = account
            self.currency = currency
            self.count = count
            self.total = total
        }
    }

    /// The month.
    public var month: LedgerMonth
    /// The groups, by category (none last), then account name.
    public var rows: [Row]

    /// A report; the report service makes these for you.
    public init(month: LedgerMonth, rows: [Row]) {
        self.month = month
        self.rows = rows
    }
}
