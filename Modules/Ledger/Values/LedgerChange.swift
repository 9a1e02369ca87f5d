public import Foundation
public import Strata

/// What one commit did to the ledger, as ``LedgerWatcher`` reports it: the commit's token,
/// time and author, and one ``LedgerChange`` per thing a reader of the ledger would notice.
///
/// ```swift
/// for try await update in watcher.updates(after: start) {
///     for change in update.changes { print(update.token.rawValue, change.account ?? "?", change.balance ?? 0) }
/// }
/// ```
public struct LedgerUpdate: Sendable, Hashable {
    /// The commit's position in the store's history: pass it to ``LedgerWatcher/updates(after:)``
    /// to resume after this commit.
    public var token: HistoryToken
    /// When the commit was made.
    public var timestamp: Date
    /// Who made it (the saving context's transaction author or name), if known.
    public var author: String?
    /// What it changed, in the order of the commit; empty when it changed nothing the ledger
    /// shows (such as running balances recomputed alone).
    public var changes: [LedgerChange]

    /// An update; ``LedgerWatcher`` makes these for you.
    public init(token: HistoryToken, timestamp: Date, author: String?, changes: [LedgerChange]) {
        self.token = token
        self.timestamp = timestamp
        self.author = author
        self.changes = changes
    }
}

/// One change to the ledger: a transaction posted, edited or removed, or an account opened,
/// changed or closed, with the account's name, the amount and the balance after it.
///
/// Values are read from the store when the watcher handles the commit (a commit's history
/// names the objects it changed, not their values), so an account renamed since shows its new
/// name. A removed transaction or a closed account shows the values its tombstone keeps.
///
/// ```swift
/// if change.kind == .posted, let account = change.account, let amount = change.amount {
///     print(account, MinorUnits.format(amount), MinorUnits.format(change.balance ?? 0))
/// }
/// ```
public struct LedgerChange: Sendable, Hashable {
    /// What happened.
    public enum Kind: String, Sendable, Hashable {
        /// A transaction was added to an account (an `add`, or one half of a transfer).
        case posted
        /// A transaction's amount, note, category, date or account changed.
        case edited
        /// A transaction was deleted.
        case removed
        /// An account was opened.
        case opened
        /// An account's balance or name changed without a transaction of this commit to show
        /// it (after a removal or a move, or a rename).
        case accountChanged
        /// An account was deleted.
        case closed
    }

    /// What happened.
    public var kind: Kind
    /// The URI of the transaction or account that changed.
    public var objectID: String
    /// The account's name; nil when it is not known any more (a posted transaction deleted
    /// since, or a removed transaction: its tombstone does not keep the account).
    public var account: String?
    /// The account's currency, when the account is known.
    public var currency: String?
    /// The transaction's amount in minor units (the opening balance for ``Kind/opened``); nil
    /// when not known.
    public var amount: Int64?
    /// The account's balance after the change, in minor units: the transaction's running balance
    /// for a transaction, the account's balance for an account; nil when not known.
    public var balance: Int64?
    /// The transaction's note, when it has one.
    public var note: String?

    /// A change; ``LedgerWatcher`` makes these for you.
    public init(
        kind: Kind, objectID: String, account: String? = nil, currency: String? = nil, amount: Int64? = nil,
        balance: Int64? = nil, note: String? = nil
    ) {
        self.kind = kind
        self.objectID = objectID
        self.account = account
        self.currency = currency
        self.amount = amount
        self.balance = balance
        self.note = note
    }
}
