public import Strata

/// How a ledger store reaches the current schema: ``LedgerSchemaV1`` → ``LedgerSchemaV2``, in
/// one custom stage.
///
/// The stage's schema change is inferred: `Transaction.memo` becomes ``Transaction/note`` (its
/// values kept) and ``Transaction/category`` is added, empty. Then `didMigrate` fills every
/// transaction's category from its note (``Transaction/suggestedCategory(forNote:)``), in the
/// same transaction: a crash or an error leaves the store at version 1, unchanged.
/// ``Strata/PersistentContainer/init(ledger:progress:)`` opens with this plan.
///
/// ```swift
/// let container = try PersistentContainer(
///     schema: .ledger, migrationPlan: LedgerMigrationPlan.self, engine: .sqlite(at: url))
/// ```
public enum LedgerMigrationPlan: MigrationPlan {
    /// Version 1, then version 2.
    public static var schemas: [any VersionedSchema.Type] { [LedgerSchemaV1.self, LedgerSchemaV2.self] }

    /// The one stage: version 1 to 2, filling the categories.
    public static var stages: [MigrationStage] { [migrateV1toV2] }

    /// Version 1 to 2: the inferred rename and addition, then the categories from the notes.
    public static let migrateV1toV2 = MigrationStage.custom(
        from: LedgerSchemaV1.self, to: LedgerSchemaV2.self, willMigrate: nil,
        didMigrate: { context in try fillCategories(in: context) })

    /// Sets the category of every transaction that has none from its note. `context` is on
    /// version 2's models; the caller saves.
    static func fillCategories(in context: ObjectContext) throws {
        for transaction in try context.fetch(FetchRequest<Transaction>()) where transaction.category == nil {
            if let category = Transaction.suggestedCategory(forNote: transaction.note) {
                transaction.category = category
            }
        }
    }
}
