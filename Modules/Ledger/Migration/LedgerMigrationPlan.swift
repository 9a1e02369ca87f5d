public import Strata

/// How a ledger store reaches the current schema: ``LedgerSchemaV1`` → ``LedgerSchemaV2`` →
/// ``LedgerSchemaV3`` → ``LedgerSchemaV4``, in three stages.
///
/// Version 1 to 2 is custom: the inferred schema change renames `Transaction.memo` to
/// ``Transaction/note`` (its values kept) and adds ``Transaction/category``, empty; then
/// `didMigrate` fills every transaction's category from its note
/// (``Transaction/suggestedCategory(forNote:)``). Version 2 to 3 is lightweight (inferred):
/// ``Transaction/externalID`` and its unique constraint, the ``ImportLine`` entity and
/// ``Transaction/source`` are added, every existing transaction without an external id or a
/// source. Version 3 to 4 is lightweight too: the ``PurgedImport`` entity is added, empty. A
/// store at version 1 runs every stage in one transaction: a crash or an error leaves
/// it at its old version, unchanged. ``Strata/PersistentContainer/init(ledger:progress:)``
/// opens with this plan.
///
/// ```swift
/// let container = try PersistentContainer(
///     schema: .ledger, migrationPlan: LedgerMigrationPlan.self, engine: .sqlite(at: url))
/// ```
public enum LedgerMigrationPlan: MigrationPlan {
    /// Versions 1, 2, 3 and 4.
    public static var schemas: [any VersionedSchema.Type] {
        [LedgerSchemaV1.self, LedgerSchemaV2.self, LedgerSchemaV3.self, LedgerSchemaV4.self]
    }

    /// Version 1 to 2 (filling the categories), then version 2 to 3 and 3 to 4 (inferred).
    public static var stages: [MigrationStage] { [migrateV1toV2, migrateV2toV3, migrateV3toV4] }

    /// Version 1 to 2: the inferred rename and addition, then the categories from the notes.
    public static let migrateV1toV2 = MigrationStage.custom(
        from: LedgerSchemaV1.self, to: LedgerSchemaV2.self, willMigrate: nil,
        didMigrate: { context in try fillCategories(in: context) })

    /// Version 2 to 3: the external id, the import lines and the link to them, all inferred.
    public static let migrateV2toV3 = MigrationStage.lightweight(from: LedgerSchemaV2.self, to: LedgerSchemaV3.self)

    /// Version 3 to 4: the purged-import records, inferred.
    public static let migrateV3toV4 = MigrationStage.lightweight(from: LedgerSchemaV3.self, to: LedgerSchemaV4.self)

    /// Sets the category of every transaction that has none from its note. `context` is on
    /// version 2's models; the caller saves.
    static func fillCategories(in context: ObjectContext) throws {
        for transaction in try context.fetch(FetchRequest<LedgerSchemaV2.Transaction>())
        where transaction.category == nil {
            if let category = Transaction.suggestedCategory(forNote: transaction.note) {
                transaction.category = category
            }
        }
    }
}
