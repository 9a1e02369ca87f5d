public import Foundation
public import Strata

/// The ledger's first schema, frozen: ``Account`` and ``Transaction`` as version 1 shipped them.
///
/// Keep these classes unchanged: stores written by version 1 hold exactly this shape, and
/// ``LedgerMigrationPlan`` starts from it. The live model is ``LedgerSchemaV3``; these classes
/// are for the migration and for tests that make a version 1 store.
///
/// ```swift
/// let container = try PersistentContainer(schema: try LedgerSchemaV1.schema(), engine: .sqlite(at: url))
/// let context = container.newBackgroundContext()
/// try await context.perform {
///     let rent = LedgerSchemaV1.Transaction(context: context)
///     rent.amount = -120_000
///     rent.memo = "Rent"
///     try context.save()
/// }
/// ```
public enum LedgerSchemaV1: VersionedSchema {
    /// Version 1.
    public static let version = 1

    /// ``Account`` and ``Transaction`` of version 1.
    public static var models: [ManagedObject.Type] { [Account.self, Transaction.self] }

    /// A version 1 account (the entity `Account`): the same attributes as the live
    /// ``Ledger/Account``.
    public final class Account: ManagedObject {
        /// The unique name.
        @Attribute(.unique) public var name = ""
        /// The ISO 4217 code.
        @Attribute public var currency = "USD"
        /// The balance before any transaction, in minor units.
        @Attribute public var openingBalance: Int64 = 0
        /// The balance after every transaction, in minor units.
        @Attribute public var balance: Int64 = 0
        /// Whether the balance may go below zero.
        @Attribute public var allowsOverdraft = true
        /// The account's transactions (deny rule).
        @Relationship(inverse: \Transaction.account, deleteRule: .deny)
        public var transactions: RelatedObjects<Transaction>
    }

    /// A version 1 transaction (the entity `Transaction`): a `memo` where version 2 has a
    /// `note`, and no category.
    public final class Transaction: ManagedObject {
        /// The signed amount in minor units.
        @Attribute public var amount: Int64 = 0
        /// A free-text description (version 2's ``Ledger/Transaction/note``).
        @Attribute public var memo = ""
        /// When the transaction happened.
        @Attribute(.indexed) public var date = Date(timeIntervalSinceReferenceDate: 0)
        /// The account's balance just after this transaction.
        @Attribute public var runningBalance: Int64 = 0
        /// The account the transaction belongs to.
        @Relationship public var account: Account?

        /// Stamps new transactions with the current time.
        public override func awakeFromInsert() {
            date = Date()
        }
    }
}
