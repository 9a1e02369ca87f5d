import Foundation
public import Strata

/// Creates, finds, renames and deletes accounts.
///
/// Every method takes a fresh context from ``contexts``, does all its work inside that
/// context's `perform` (off the main actor, on the context's own queue), saves at most once,
/// and returns only `Sendable` values. A write that hits a save conflict is re-run whole in a
/// new context by `ContextFactory.performUnitOfWork`. The service holds no context, so one
/// call's failure cannot leak into the next, and it is safe to share between tasks.
///
/// ```swift
/// let container = try PersistentContainer(schema: .ledger, engine: .sqlite(at: storeURL))
/// let accounts = AccountService(contexts: container)
/// let checking = try await accounts.create(name: "Checking", currency: "USD", openingBalance: 25_000)
/// let renamed = try await accounts.rename(checking.id, to: "Everyday")
/// ```
public struct AccountService: Sendable {
    /// Where the service gets a fresh context for each call.
    public let contexts: any ContextFactory

    /// - Parameter contexts: usually a `PersistentContainer` opened with ``Strata/Schema/ledger``.
    public init(contexts: any ContextFactory) {
        self.contexts = contexts
    }

    /// Creates an account.
    ///
    /// ```swift
    /// let wallet = try await accounts.create(
    ///     name: "Wallet", currency: "EUR", openingBalance: 5_000, allowsOverdraft: false)
    /// ```
    /// - Parameters:
    ///   - name: unique, 1 to 100 characters; surrounding spaces are trimmed.
    ///   - currency: an ISO 4217 code such as `"USD"`.
    ///   - openingBalance: in minor units.
    ///   - allowsOverdraft: whether the balance may go below zero.
    /// - Returns: the saved account.
    /// - Throws: ``LedgerError/invalidName(_:)``, ``LedgerError/invalidCurrency(_:)``,
    ///   ``LedgerError/duplicateAccountName(_:)``,
    ///   ``LedgerError/insufficientFunds(account:available:attemptedBalance:currency:)``
    ///   for a negative opening balance without overdraft, and storage errors (`StrataError`).
    public func create(
        name: String, currency: String, openingBalance: Int64 = 0, allowsOverdraft: Bool = true
    ) async throws -> AccountSnapshot {
        let name = try AccountRules.validName(name)
        let currency = try AccountRules.validCurrency(currency)
        return try await contexts.performUnitOfWork { context in
            let account = Account(context: context)
            account.name = name
            account.currency = currency
            account.openingBalance = openingBalance
            account.allowsOverdraft = allowsOverdraft
            try account.recalculateBalances()
            try context.saveLedger(accountName: name)
            return AccountSnapshot(account)
        }
    }

    /// Every account, sorted by name.
    /// - Throws: storage errors (`StrataError`).
    public func list() async throws -> [AccountSnapshot] {
        let context = contexts.newBackgroundContext()
        return try await context.perform {
            try context.fetch(FetchRequest<Account>(sortBy: [SortDescriptor(\.name)])).map(AccountSnapshot.init)
        }
    }

    /// The account a URI names.
    ///
    /// ```swift
    /// let account = try await accounts.account(uri: "strata://…/Account/p1")
    /// ```
    /// - Throws: ``LedgerError/invalidURI(_:reason:)``, ``LedgerError/unknownAccount(_:)``, and
    ///   storage errors.
    public func account(uri: String) async throws -> AccountSnapshot {
        let context = contexts.newBackgroundContext()
        return try await context.perform {
            AccountSnapshot(try context.account(uri: uri))
        }
    }

    /// The account's current balance in minor units.
    /// - Throws: ``LedgerError/invalidURI(_:reason:)``, ``LedgerError/unknownAccount(_:)``, and
    ///   storage errors.
    public func balance(of accountURI: String) async throws -> Int64 {
        let context = contexts.newBackgroundContext()
        return try await context.perform {
            try context.account(uri: accountURI).balance
        }
    }

    /// Renames an account.
    /// - Returns: the renamed account.
    /// - Throws: ``LedgerError/invalidName(_:)``, ``LedgerError/duplicateAccountName(_:)``,
    ///   ``LedgerError/invalidURI(_:reason:)``, ``LedgerError/unknownAccount(_:)``, and storage errors.
    public func rename(_ accountURI: String, to newName: String) async throws -> AccountSnapshot {
        let name = try AccountRules.validName(newName)
        return try await contexts.performUnitOfWork { context in
            let account = try context.account(uri: accountURI)
            account.name = name
            try context.saveLedger(accountName: name)
            return AccountSnapshot(account)
        }
    }

    /// Deletes an account that has no transactions.
    /// - Throws: ``LedgerError/accountHasTransactions(account:count:)`` while it has any (the
    ///   model's deny rule backs this up at save), ``LedgerError/invalidURI(_:reason:)``,
    ///   ``LedgerError/unknownAccount(_:)``, and storage errors.
    public func delete(_ accountURI: String) async throws {
        try await contexts.performUnitOfWork { context in
            let account = try context.account(uri: accountURI)
            let count = account.transactions.count
            guard count == 0 else { throw LedgerError.accountHasTransactions(account: account.name, count: count) }
            context.delete(account)
            try context.saveLedger()
        }
    }
}
