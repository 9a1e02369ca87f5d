/// The staged migrations the core hands an engine at open: every schema version in order and the
/// stages between them, in engine terms.
///
/// The core builds it from a `MigrationPlan` and puts it on ``StoreSchema/migrationPlan``; the
/// engine passes it on unread, since ``StoreSchema/reconcileRecorded(storeVersion:recordedJSON:path:session:)``
/// runs it. It is a reference type only so that ``StoreSchema`` stays `Hashable` (by identity).
///
/// ```swift
/// let plan = StoreMigrationPlan(versions: [v1, v2], stages: [.lightweight(from: 1, to: 2)])
/// var schema = v2
/// schema.migrationPlan = plan
/// ```
public final class StoreMigrationPlan: Sendable, Hashable {
    /// Every version's store schema, in ascending version order; each has its ``StoreSchema/recorded``.
    public let versions: [StoreSchema]
    /// The stages, one between each two consecutive versions (`stages[i]` goes from `versions[i]`
    /// to `versions[i + 1]`).
    public let stages: [StoreMigrationStage]
    /// Called with the progress of a migration, synchronously, on the thread that runs the
    /// engine's opening transaction.
    public let progress: (@Sendable (MigrationProgress) -> Void)?

    /// A plan.
    /// - Throws: ``StrataError/invalidSchema(_:)`` when the versions are not ascending, lack a
    ///   recorded schema, or the stages do not join each two consecutive versions.
    public init(
        versions: [StoreSchema], stages: [StoreMigrationStage],
        progress: (@Sendable (MigrationProgress) -> Void)? = nil
    ) throws(StrataError) {
        for (earlier, later) in zip(versions, versions.dropFirst()) where earlier.version >= later.version {
            throw .invalidSchema(
                "the migration plan's versions must ascend, but \(earlier.version) comes before \(later.version)")
        }
        guard versions.allSatisfy({ $0.recorded != nil }) else {
            throw .invalidSchema("every version of a migration plan needs its recorded schema")
        }
        guard stages.count == max(versions.count - 1, 0) else {
            throw .invalidSchema(
                """
                a migration plan of \(versions.count) versions needs \(max(versions.count - 1, 0)) stages, one \
                between each two consecutive versions; it has \(stages.count)
                """
            )
        }
        for (index, stage) in stages.enumerated()
        where stage.fromVersion != versions[index].version || stage.toVersion != versions[index + 1].version {
            throw .invalidSchema(
                """
                stage \(index + 1) of the migration plan goes from \(stage.fromVersion) to \(stage.toVersion), \
                but the versions say \(versions[index].version) to \(versions[index + 1].version): list the stages \
                in order, one between each two consecutive versions
                """
            )
        }
        self.versions = versions
        self.stages = stages
        self.progress = progress
    }

    public static func == (lhs: StoreMigrationPlan, rhs: StoreMigrationPlan) -> Bool { lhs === rhs }

    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}

/// One stage of a ``StoreMigrationPlan``: inferred, or custom with the core's closures around it.
///
/// A custom stage runs `willMigrate` on an engine laid out as the old version, then the schema
/// change (inferred, with type changes and required additions filled with placeholder values
/// that `didMigrate` is expected to set), then `didMigrate` on an engine laid out as the new
/// version. Both engines read and write inside the migration's one transaction
/// (``StoreMigrationSession/transactionEngine(for:)``).
///
/// ```swift
/// let stage = StoreMigrationStage.custom(from: 1, to: 2, willMigrate: nil, didMigrate: { engine in /* … */ })
/// ```
public struct StoreMigrationStage: Sendable {
    /// The version the stage starts from.
    public var fromVersion: Int
    /// The version the stage ends at.
    public var toVersion: Int
    /// Whether the stage is custom (its schema change may replace data that the closures fill in).
    public var isCustom: Bool
    /// Runs before the schema change, on an engine laid out as ``fromVersion``.
    public var willMigrate: (@Sendable (any StorageEngine) throws -> Void)?
    /// Runs after the schema change, on an engine laid out as ``toVersion``.
    public var didMigrate: (@Sendable (any StorageEngine) throws -> Void)?

    /// An inferred stage.
    public static func lightweight(from: Int, to: Int) -> StoreMigrationStage {
        StoreMigrationStage(fromVersion: from, toVersion: to, isCustom: false, willMigrate: nil, didMigrate: nil)
    }

    /// A custom stage.
    public static func custom(
        from: Int, to: Int, willMigrate: (@Sendable (any StorageEngine) throws -> Void)?,
        didMigrate: (@Sendable (any StorageEngine) throws -> Void)?
    ) -> StoreMigrationStage {
        StoreMigrationStage(
            fromVersion: from, toVersion: to, isCustom: true, willMigrate: willMigrate, didMigrate: didMigrate)
    }
}

/// How far a migration has gone, reported while a store opens.
///
/// ```swift
/// let container = try PersistentContainer(schema: schema, migrationPlan: Plan.self, engine: engine) { progress in
///     print("migrating: \(Int(progress.fractionCompleted * 100))%")
/// }
/// ```
public struct MigrationProgress: Sendable, Hashable {
    /// The version the store had when the migration started.
    public var storeVersion: Int
    /// The version the store will have.
    public var modelVersion: Int
    /// The stage running now (1-based), or ``stageCount`` once done.
    public var stage: Int
    /// How many stages the migration runs.
    public var stageCount: Int
    /// Rows rewritten so far in the current stage.
    public var rowsMigrated: Int
    /// Rows the current stage rewrites (0 when it rewrites none, as for an added column on SQLite).
    public var rowsToMigrate: Int
    /// The whole migration's progress, from 0 to 1.
    public var fractionCompleted: Double

    /// A progress report.
    public init(
        storeVersion: Int, modelVersion: Int, stage: Int, stageCount: Int, rowsMigrated: Int, rowsToMigrate: Int,
        fractionCompleted: Double
    ) {
        self.storeVersion = storeVersion
        self.modelVersion = modelVersion
        self.stage = stage
        self.stageCount = stageCount
        self.rowsMigrated = rowsMigrated
        self.rowsToMigrate = rowsToMigrate
        self.fractionCompleted = fractionCompleted
    }
}
