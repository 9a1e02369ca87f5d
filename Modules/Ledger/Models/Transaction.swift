public import Foundation
public import Strata

/// One posting to an account: a signed amount in minor units (positive adds money), a memo, a
/// date, and the account's running balance after it.
///
/// ```swift
/// try await context.perform {
///     let account = try context.existingObject(with: accountID, as: Account.self)
///     let coffee = Transaction(context: context)
///     coffee.amount = -450                       // -$4.50
///     coffee.memo = "Coffee"
///     coffee.account = account                   // also adds it to account.transactions
///     try account.recalculateBalances()
///     try context.save()
/// }
/// ```
///
/// Lifetime rule: a `Transaction` is valid only inside the `perform` of the context that
/// fetched or inserted it. Carry its values out as a ``TransactionRecord``.
public final class Transaction: ManagedObject {
    /// The signed amount in minor units of the account's currency; never zero.
    @Attribute public var amount: Int64 = 0

    /// A free-text description.
    @Attribute public var memo = ""

    /// When the transaction happened. New transactions get the current time on insert.
    /// Running balances follow date order (ties in insertion order).
    @Attribute(.indexed) public var date = Date(timeIntervalSinceReferenceDate: 0)

    /// The account's balance just after this transaction, maintained by
    /// ``Account/recalculateBalances()``.
    @Attribute public var runningBalance: Int64 = 0

    /// The account the transaction belongs to (the inverse of ``Account/transactions``).
    @Relationship public var account: Account?

    /// Stamps new transactions with the current time.
    public override func awakeFromInsert() {
        date = Date()
    }
}
