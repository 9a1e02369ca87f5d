public import Foundation
public import Strata

/// The ledger's second schema, frozen: ``Account`` and ``Transaction`` as version 2 shipped them.
///
/// Changes from ``LedgerSchemaV1``: `Transaction.memo` is renamed `note` (declared with
/// `@Attribute(originalName: "memo")`, so the values are kept), and `category` is added
/// (optional). Keep these classes unchanged: stores written by version 2 hold exactly this
/// shape. The live model is ``LedgerSchemaV3``; ``LedgerMigrationPlan`` goes through this
/// version.
///
/// ```swift
/// let schema = try LedgerSchemaV2.schema()
/// print(schema.version)                         // 2
/// ```
public enum LedgerSchemaV2: VersionedSchema {
    /// Version 2.
    public static let version = 2

    /// ``Account`` and ``Transaction`` of version 2.
    public static var models: [ManagedObject.Type] { [Account.self, Transaction.self] }

    /// A version 2 account (the entity `Account`): the same attributes as the live
    /// ``Ledger/Account``.
    public final class Account: ManagedObject {
        /// The unique name.
        @Attribute([.unique, .preserveAfterDeletion]) public var name = ""
        /// The ISO 4217 code.
        @Attribute(.preserveAfterDeletion) public var currency = "USD"
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

    /// A version 2 transaction (the entity `Transaction`): no external id and no source line.
    public final class Transaction: ManagedObject {
        /// The signed amount in minor units.
        @Attribute(.preserveAfterDeletion) public var amount: Int64 = 0
        /// A free-text description (version 1's `memo`).
        @Attribute(.preserveAfterDeletion, originalName: "memo") public var note = ""
        /// What the money was for; nil when unknown.
        @Attribute public var category: String?
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
