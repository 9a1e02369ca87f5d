import Strata

/// An account's values at one moment: what ``AccountService`` returns instead of the object.
///
/// A plain `Sendable` value, safe to keep, compare and pass between tasks. `id` is the
/// account's object URI, the handle every service method takes.
///
/// ```swift
/// let checking = try await accounts.create(name: "Checking", currency: "USD", openingBalance: 10_000)
/// print(checking.name, MinorUnits.format(checking.balance), checking.currency)
/// try await transactions.add(to: checking.id, amount: -450, note: "Coffee")
/// ```
public struct AccountSnapshot: Sendable, Hashable, Identifiable {
    /// The account's object URI (`strata://<store>/Account/p<key>`).
    public var id: String
    /// The unique name.
    public var name: String
    /// The ISO 4217 code.
    public var currency: String
    /// The balance before any transaction, in minor units.
    public var openingBalance: Int64
    /// The balance after every transaction, in minor units.
    public var balance: Int64
    /// Whether the balance may go below zero.
    public var allowsOverdraft: Bool
    /// How many transactions the account has.
    public var transactionCount: Int

    /// Creates a snapshot; services make these for you.
    public init(
        id: String, name: String, currency: String, openingBalance: Int64, balance: Int64,
        allowsOverdraft: Bool, transactionCount: Int
    ) {
        self.id = id
        self.name = name
        self.currency = currency
        self.openingBalance = openingBalance
        self.balance = balance
        self.allowsOverdraft = allowsOverdraft
        self.transactionCount = transactionCount
    }

    /// Copies a saved account's values. Call inside its context's `perform`.
    init(_ account: Account) {
        self.init(
            id: account.objectID.uriString, name: account.name, currency: account.currency,
            openingBalance: account.openingBalance, balance: account.balance,
            allowsOverdraft: account.allowsOverdraft, transactionCount: account.transactions.count)
    }
}
