public import Foundation

/// What ``PurgeService/purge(before:)`` did: the transactions deleted, the import lines deleted
/// with them (cascade), and each account's amount moved into its opening balance.
///
/// ```swift
/// let summary = try await purges.purge(before: try LedgerDay.parse("2023-01-01"))
/// print(summary.transactionsDeleted, summary.importLinesDeleted)
/// ```
public struct PurgeSummary: Sendable, Hashable {
    /// One account whose transactions were purged.
    public struct AccountLine: Sendable, Hashable {
        /// The account's name.
        public var account: String
        /// How many of its transactions were deleted.
        public var transactionsDeleted: Int
        /// Their amounts' sum, now part of its opening balance (minor units).
        public var movedToOpeningBalance: Int64
        /// The opening balance after the purge.
        public var openingBalance: Int64
        /// The balance, unchanged by the purge.
        public var balance: Int64

        /// A line; the purge makes these for you.
        public init(
            account: String, transactionsDeleted: Int, movedToOpeningBalance: Int64, openingBalance: Int64,
            balance: Int64
        ) {
            self.account = account
            self.transactionsDeleted = transactionsDeleted
            self.movedToOpeningBalance = movedToOpeningBalance
            self.openingBalance = openingBalance
            self.balance = balance
        }
    }

    /// The cut-off: transactions dated before it were deleted.
    public var before: Date
    /// Transactions deleted.
    public var transactionsDeleted: Int
    /// ``ImportLine`` rows deleted with them (``Transaction/source`` cascades).
    public var importLinesDeleted: Int
    /// The accounts that had transactions purged, by name.
    public var accounts: [AccountLine]

    /// A summary; the purge makes these for you.
    public init(before: Date, transactionsDeleted: Int, importLinesDeleted: Int, accounts: [AccountLine]) {
        self.before = before
        self.transactionsDeleted = transactionsDeleted
        self.importLinesDeleted = importLinesDeleted
        self.accounts = accounts
    }
}
