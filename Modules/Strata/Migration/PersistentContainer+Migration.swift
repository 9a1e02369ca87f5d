public import StrataStorage
import Synchronization

extension PersistentContainer {
    /// Opens (creating if needed) the store, migrating an older one through the stages of `migrationPlan`.
    ///
    /// A store at a version the plan lists runs every stage from there on, in order, in one
    /// transaction; a store at a version it does not list, or a model newer than the plan's last
    /// version, is brought the rest of the way by inference. A store already at `schema`'s
    /// version opens as usual. A crash, a refused change or a throwing stage leaves the store at
    /// its old version, unchanged.
    ///
    /// ```swift
    /// let container = try PersistentContainer(
    ///     schema: try LibraryV2.schema(), migrationPlan: LibraryPlan.self, engine: .sqlite(at: url)
    /// ) { progress in
    ///     print("migrating \(Int(progress.fractionCompleted * 100))%")
    /// }
    /// ```
    /// - Parameters:
    ///   - schema: the current model: the plan's last version, or a later one.
    ///   - migrationPlan: the versions and stages; nil migrates by inference alone.
    ///   - engine: the engine and location.
    ///   - progress: called synchronously as the migration goes, on the thread that runs the
    ///     engine's opening transaction (not called when no
    ///     migration is needed). Its `fractionCompleted` never goes back, also when the engine
    ///     runs the migration again in the same open (LMDB does after growing its map).
    ///   - recordsHistory: whether saves append persistent history (on by default; see
    ///     ``init(schema:engine:recordsHistory:)``).
    /// - Throws: the error a custom stage's closure threw (the store is unchanged);
    ///   ``StrataStorage/StrataError/invalidSchema(_:)`` for a plan whose versions or stages do not line up,
    ///   or whose last version is newer than `schema` or has the same version with other classes;
    ///   and everything ``init(schema:engine:recordsHistory:)`` throws.
    public convenience init(
        schema: Schema, migrationPlan: (any MigrationPlan.Type)?, engine: EngineConfiguration,
        progress: (@Sendable (MigrationProgress) -> Void)? = nil, recordsHistory: Bool = true
    ) throws {
        try self.init(
            schema: schema, migrationPlan: migrationPlan, engine: engine, progress: progress,
            recordsHistory: recordsHistory, instrumentation: nil)
    }

    /// Opens the store like ``init(schema:migrationPlan:engine:progress:recordsHistory:)``, with a
    /// hook that receives the container's events, the migration's progress among them
    /// (``StrataEvent/migration(_:)``, the same reports as `progress`, right after it).
    ///
    /// ```swift
    /// let hook = Instrumentation { event in
    ///     if case .migration(let progress) = event { print("migrating: \(progress.fractionCompleted)") }
    /// }
    /// let container = try PersistentContainer(
    ///     schema: try LibraryV2.schema(), migrationPlan: LibraryPlan.self, engine: .sqlite(at: url),
    ///     instrumentation: hook)
    /// ```
    ///
    /// Lifetime rule: see ``Instrumentation``; migration events are delivered on the thread that
    /// runs the engine's opening transaction, before this initializer returns.
    /// - Parameters:
    ///   - schema: the current model: the plan's last version, or a later one.
    ///   - migrationPlan: the versions and stages; nil migrates by inference alone.
    ///   - engine: the engine and location.
    ///   - progress: called as the migration goes (see the initializer without a hook).
    ///   - recordsHistory: whether saves append persistent history (on by default).
    ///   - instrumentation: the hook; nil reports nothing.
    /// - Throws: everything ``init(schema:migrationPlan:engine:progress:recordsHistory:)`` throws.
    public convenience init(
        schema: Schema, migrationPlan: (any MigrationPlan.Type)?, engine: EngineConfiguration,
        progress: (@Sendable (MigrationProgress) -> Void)? = nil, recordsHistory: Bool = true,
        instrumentation: Instrumentation?
    ) throws {
        var reports = progress
        if let instrumentation {
            reports = { report in
                progress?(report)
                instrumentation.emit(.migration(report))
            }
        }
        // An engine may run the whole migration again in the same open (LMDB, after growing its
        // map), reporting from 0 once more: the fraction must never go back.
        if let forward = reports { reports = ForwardOnlyProgress(forward).report }
        let failures = StageFailures()
        let storeSchema = try MigrationPlanning.storeSchema(
            for: schema, plan: migrationPlan, progress: reports, failures: failures)
        do {
            try self.init(
                schema: schema, storeSchema: storeSchema, engine: engine, recordsHistory: recordsHistory,
                instrumentation: instrumentation)
        } catch let error as StrataError {
            guard case .migrationStageFailed = error, let stageError = failures.last else { throw error }
            throw stageError
        }
    }
}

/// Turns a ``MigrationPlan`` into the engine-level ``StrataStorage/StoreMigrationPlan``.
enum MigrationPlanning {
    static func storeSchema(
        for schema: Schema, plan: (any MigrationPlan.Type)?, progress: (@Sendable (MigrationProgress) -> Void)?,
        failures: StageFailures
    ) throws(StrataError) -> StoreSchema {
        var storeSchema = schema.storeSchema
        guard let plan else {
            if let progress {
                storeSchema.migrationPlan = try StoreMigrationPlan(versions: [], stages: [], progress: progress)
            }
            return storeSchema
        }
        var versions: [Schema] = []
        for version in plan.schemas { versions.append(try version.schema()) }
        if let last = versions.last {
            guard last.version <= schema.version else {
                throw .invalidSchema(
                    """
                    the migration plan's last version (\(last.version)) is newer than the schema's \
                    (\(schema.version)): open with the plan's last version
                    """
                )
            }
            if last.version == schema.version, last.recordedSchema != schema.recordedSchema {
                throw .invalidSchema(
                    """
                    the migration plan's version \(last.version) has other classes than the schema of the same \
                    version: pass the plan's last version as the schema, or give the new model a higher version
                    """
                )
            }
        }
        var stages: [StoreMigrationStage] = []
        for stage in plan.stages {
            guard stage.isCustom else {
                stages.append(.lightweight(from: stage.fromVersion, to: stage.toVersion))
                continue
            }
            let from = versions.first { $0.version == stage.fromVersion }
            let to = versions.first { $0.version == stage.toVersion }
            guard let from, let to else {
                throw .invalidSchema(
                    """
                    the migration plan has a stage from \(stage.fromVersion) to \(stage.toVersion), but its schemas \
                    do not list both versions
                    """
                )
            }
            var willMigrate: (@Sendable (any StorageEngine) throws -> Void)?
            if let body = stage.willMigrate {
                willMigrate = { engine in try failures.run(body, on: engine, schema: from, stage: stage) }
            }
            var didMigrate: (@Sendable (any StorageEngine) throws -> Void)?
            if let body = stage.didMigrate {
                didMigrate = { engine in try failures.run(body, on: engine, schema: to, stage: stage) }
            }
            stages.append(
                .custom(from: stage.fromVersion, to: stage.toVersion, willMigrate: willMigrate, didMigrate: didMigrate))
        }
        storeSchema.migrationPlan = try StoreMigrationPlan(
            versions: versions.map(\.storeSchema), stages: stages, progress: progress)
        return storeSchema
    }
}

/// Runs a custom stage's closures in a context over the migration's transaction engine, and
/// keeps the last error they threw, so that the container rethrows it in place of the engine's
/// ``StrataStorage/StrataError/migrationStageFailed(fromVersion:toVersion:reason:)``.
final class StageFailures: Sendable {
    private let latest = Mutex<(any Error)?>(nil)

    /// The last error a stage's closure threw (an engine that grows its store and runs the
    /// migration again runs the closures again: the last attempt's error is the one that counts).
    var last: (any Error)? { latest.withLock { $0 } }

    /// Runs `body` with a context on `schema` over `engine`, inline on this thread, and saves
    /// what it left unsaved.
    func run(
        _ body: @Sendable (ObjectContext) throws -> Void, on engine: any StorageEngine, schema: Schema,
        stage: MigrationStage
    ) throws {
        let context = ObjectContext(
            engine: engine, schema: schema, name: "migration \(stage.fromVersion)→\(stage.toVersion)")
        do {
            try context.performInline {
                try body(context)
                if context.hasChanges { try context.save() }
            }
        } catch {
            latest.withLock { $0 = error }
            throw error
        }
    }
}
