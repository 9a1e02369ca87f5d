public import Foundation
public import Strata

/// One posting to an account: a signed amount in minor units (positive adds money), a note, an
/// optional category, a date, and the account's running balance after it.
///
/// ```swift
/// try await context.perform {
///     let account = try context.existingObject(with: accountID, as: Account.self)
///     let coffee = Transaction(context: context)
///     coffee.amount = -450                       // -$4.50
///     coffee.note = "Coffee"
///     coffee.category = "dining"
///     coffee.account = account                   // also adds it to account.transactions
///     try account.recalculateBalances()
///     try context.save()
/// }
/// ```
///
/// This is the model of versions 3 and 4 (``LedgerSchemaV3``, ``LedgerSchemaV4``): version 1
/// (``LedgerSchemaV1``) called ``note`` `memo` and had no ``category``; version 2
/// (``LedgerSchemaV2``) had no ``externalID`` and no ``source``. Open a store with
/// ``Strata/PersistentContainer/init(ledger:progress:)`` and an older store is migrated by
/// ``LedgerMigrationPlan``.
///
/// Lifetime rule: a `Transaction` is valid only inside the `perform` of the context that
/// fetched or inserted it. Carry its values out as a ``TransactionRecord``.
public final class Transaction: ManagedObject {
    /// The signed amount in minor units of the account's currency; never zero. Kept in the
    /// history's tombstone of a deleted transaction.
    @Attribute(.preserveAfterDeletion) public var amount: Int64 = 0

    /// A free-text description (called `memo` in version 1 stores, which keep their values).
    /// Kept in the history's tombstone of a deleted transaction.
    @Attribute(.preserveAfterDeletion, originalName: "memo") public var note = ""

    /// What the money was for, such as `"housing"` or `"dining"`; nil when unknown. Version 1
    /// stores get it from ``note`` when they migrate (``suggestedCategory(forNote:)``).
    @Attribute public var category: String?

    /// When the transaction happened. New transactions get the current time on insert.
    /// Running balances follow date order (ties in insertion order).
    @Attribute(.indexed) public var date = Date(timeIntervalSinceReferenceDate: 0)

    /// The account's balance just after this transaction, maintained by
    /// ``Account/recalculateBalances()``.
    @Attribute public var runningBalance: Int64 = 0

    /// The account the transaction belongs to (the inverse of ``Account/transactions``).
    @Relationship public var account: Account?

    /// The id the transaction has in the system it was imported from (a bank's transaction id);
    /// nil for transactions made in the ledger. Unique: `ledger import` updates the transaction
    /// with this id instead of adding a second one (saving a duplicate throws
    /// `StrataError.constraintViolation`).
    @Attribute(.unique) public var externalID: String?

    /// The CSV line the transaction was imported from; nil for transactions made in the ledger.
    /// Deleting the transaction deletes the line too (cascade rule).
    @Relationship(deleteRule: .cascade) public var source: ImportLine?

    /// Stamps new transactions with the current time.
    public override func awakeFromInsert() {
        date = Date()
    }
}
