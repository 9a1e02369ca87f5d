/// The versions a store has gone through and the stages between them, in order.
///
/// Open a container with a plan (``PersistentContainer/init(schema:migrationPlan:engine:progress:recordsHistory:)``)
/// and a store at any older version listed here migrates through every stage from its version on,
/// in one open and one transaction: a store at version 1 opened by version 4 runs 1→2, 2→3 and 3→4.
/// A crash or a failed stage leaves it at its old version, unchanged.
///
/// ```swift
/// enum LibraryPlan: MigrationPlan {
///     static var schemas: [any VersionedSchema.Type] { [LibraryV1.self, LibraryV2.self] }
///     static var stages: [MigrationStage] {
///         [.lightweight(from: LibraryV1.self, to: LibraryV2.self)]
///     }
/// }
/// ```
public protocol MigrationPlan {
    /// Every version, oldest first.
    static var schemas: [any VersionedSchema.Type] { get }
    /// One stage between each two consecutive versions of ``schemas``, in the same order.
    static var stages: [MigrationStage] { get }
}

/// One stage of a ``MigrationPlan``: inferred, or custom with code before and after.
///
/// A **lightweight** stage changes the store as inferred from the two versions' models (what is
/// inferred: `Docs/Migrations.md`). A **custom** stage runs `willMigrate` with a context on the
/// old version's models, then the schema change, then `didMigrate` with a context on the new
/// version's models. In a custom stage the schema change may also replace what inference
/// refuses (a type change, a required attribute without a default): the new column holds its
/// default, or the type's zero, until `didMigrate` sets it.
///
/// ```swift
/// .custom(from: LibraryV1.self, to: LibraryV2.self, willMigrate: nil, didMigrate: { context in
///     for book in try context.fetch(FetchRequest<LibraryV2.Book>()) {
///         book.sortTitle = book.title.lowercased()
///     }
/// })
/// ```
///
/// Lifetime rule: the context exists only for the closure's call, inside the migration's
/// transaction, while the store opens: synchronously, on the thread that runs the engine's
/// opening transaction (the caller's for SQLite, the writer thread for LMDB), so don't call
/// `perform` or rely on task-local values in it; objects must not escape it. The closure may save;
/// what it leaves unsaved is saved when it returns. A throw aborts the whole migration: the
/// store stays as it was, and the container's initialiser rethrows the closure's error.
public struct MigrationStage: Sendable {
    /// The version the stage starts from.
    public let fromVersion: Int
    /// The version the stage ends at.
    public let toVersion: Int
    let willMigrate: (@Sendable (ObjectContext) throws -> Void)?
    let didMigrate: (@Sendable (ObjectContext) throws -> Void)?
    let isCustom: Bool

    /// A stage inferred from the two versions' models.
    public static func lightweight(
        from: any VersionedSchema.Type, to: any VersionedSchema.Type
    ) -> MigrationStage {
        MigrationStage(
            fromVersion: from.version, toVersion: to.version, willMigrate: nil, didMigrate: nil, isCustom: false)
    }

    /// A stage with code: `willMigrate` sees the old version's models, `didMigrate` the new
    /// version's; either may be nil.
    public static func custom(
        from: any VersionedSchema.Type, to: any VersionedSchema.Type,
        willMigrate: (@Sendable (ObjectContext) throws -> Void)?,
        didMigrate: (@Sendable (ObjectContext) throws -> Void)?
    ) -> MigrationStage {
        MigrationStage(
            fromVersion: from.version, toVersion: to.version, willMigrate: willMigrate, didMigrate: didMigrate,
            isCustom: true)
    }
}
