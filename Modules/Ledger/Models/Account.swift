public import Strata

/// An account in the ledger: a unique name, a currency, an opening balance, the current
/// balance, and its transactions.
///
/// Amounts are integer minor units of ``currency`` (cents for USD and EUR), never `Double`.
/// ``balance`` is always ``openingBalance`` plus the sum of the transactions; keep it that way
/// by calling ``recalculateBalances()`` after changing the transactions.
///
/// ```swift
/// try await context.perform {
///     let account = Account(context: context)
///     account.name = "Checking"
///     account.currency = "USD"
///     account.openingBalance = 10_000            // $100.00
///     try account.recalculateBalances()
///     try context.save()
/// }
/// ```
///
/// Lifetime rule: an `Account` is valid only inside the `perform` of the context that fetched
/// or inserted it. Do not store it or return it; pass its `objectID` (or URI string) and use
/// ``AccountSnapshot`` to carry its values out. Services do this for you.
public final class Account: ManagedObject {
    /// The account's name; no two accounts share one (saving a duplicate throws
    /// `StrataError.constraintViolation`, which the services report as
    /// ``LedgerError/duplicateAccountName(_:)``). Kept in the history's tombstone of a deleted
    /// account.
    @Attribute([.unique, .preserveAfterDeletion]) public var name = ""

    /// The ISO 4217 currency code, three uppercase letters such as `"USD"`. Kept in the
    /// history's tombstone of a deleted account.
    @Attribute(.preserveAfterDeletion) public var currency = "USD"

    /// The balance before any transaction, in minor units.
    @Attribute public var openingBalance: Int64 = 0

    /// The current balance in minor units: ``openingBalance`` plus every transaction's amount.
    @Attribute public var balance: Int64 = 0

    /// Whether the balance may go below zero. When false, ``recalculateBalances()`` throws
    /// ``LedgerError/insufficientFunds(account:available:attemptedBalance:currency:)`` for a
    /// change that would make it negative.
    @Attribute public var allowsOverdraft = true

    /// The account's transactions. An account cannot be deleted while it has any (deny rule).
    @Relationship(inverse: \Transaction.account, deleteRule: .deny)
    public var transactions: RelatedObjects<Transaction>
}
