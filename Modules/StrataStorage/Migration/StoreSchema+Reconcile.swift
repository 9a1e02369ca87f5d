/// What ``StoreSchema/reconcileRecorded(storeVersion:recordedJSON:path:session:)`` left the engine to do.
public enum RecordedSchemaOutcome: Sendable, Hashable {
    /// The store's recorded schema is the model's: nothing was written.
    case matches
    /// The store predates recorded schemas and its version matches: the engine checks that its
    /// tables or databases are the model's, then records ``StoreSchema/recorded`` in the same
    /// transaction, once.
    case recordNow
    /// The store was migrated through the session; its version and recorded schema are now the
    /// model's, written in the open transaction, which the engine commits.
    case migrated
}

extension StoreSchema {
    /// Decides whether a store may open with this schema, and migrates an older one: the shared
    /// driver that every engine calls at open, inside the write transaction that read its metadata.
    ///
    /// - The same version and the same recorded shape: ``RecordedSchemaOutcome/matches``.
    /// - The same version with another shape: refused (a store is only migrated across versions).
    /// - A newer store: refused with ``StrataError/storeNewerThanModel(storeVersion:modelVersion:)``.
    /// - An older store with a ``migrationPlan``: every stage from the store's version on, in
    ///   order, through `session` (a store whose shape drifted from its declared version is first
    ///   brought to it by inference, when that can be inferred); then, if the model is not the
    ///   plan's last version, an inferred step to the model.
    /// - An older store without a plan: one inferred migration, when ``infersMigrations`` is on.
    ///
    /// Each step is applied with ``SchemaMigrationApplier/apply(_:to:progress:)``, which also
    /// records its target; the engine commits once at the end. When this throws, the engine rolls
    /// the whole transaction back.
    ///
    /// ```swift
    /// switch try schema.reconcileRecorded(storeVersion: v, recordedJSON: json, path: path, session: session) {
    /// case .matches, .migrated: break
    /// case .recordNow: try checkTablesThenRecord()
    /// }
    /// ```
    /// - Throws: ``StrataError/schemaMismatch(storeVersion:modelVersion:differences:)``,
    ///   ``StrataError/storeNewerThanModel(storeVersion:modelVersion:)``,
    ///   ``StrataError/migrationNotInferable(storeVersion:modelVersion:refused:)``,
    ///   ``StrataError/migrationStageFailed(fromVersion:toVersion:reason:)`` (a custom stage's
    ///   closure threw), ``StrataError/storeCorrupt(_:native:)`` for unreadable JSON,
    ///   ``StrataError/notAStore(path:reason:native:)`` for JSON of a newer layout, and the session's errors.
    public func reconcileRecorded(
        storeVersion: Int, recordedJSON: String?, path: String, session: some StoreMigrationSession
    ) throws(StrataError) -> RecordedSchemaOutcome {
        guard storeVersion <= version else {
            throw .storeNewerThanModel(storeVersion: storeVersion, modelVersion: version)
        }
        guard let recordedJSON, let recorded, storeVersion < version else {
            return try checkRecorded(storeVersion: storeVersion, recordedJSON: recordedJSON, path: path).outcome
        }
        let stored = try RecordedSchema(jsonText: recordedJSON, path: path)
        guard infersMigrations || migrationPlan != nil else {
            throw .schemaMismatch(
                storeVersion: storeVersion, modelVersion: version,
                differences: RecordedSchema.differences(from: stored, to: recorded))
        }
        try refuseUnknownEntities(in: stored, storeVersion: storeVersion)
        var run = MigrationRun(storeVersion: storeVersion, model: self, current: stored, session: session)
        try run.perform()
        return .migrated
    }

    /// Refuses a store whose entities include one that the plan's schema of the store's version
    /// does not have. Bringing a drifted store back to its version would drop that entity with its
    /// rows: such a store is more likely another application's (at the same version number) than
    /// a build of this one, and a migration must never delete it. A store at a version the plan
    /// does not list, and a store without a plan, are not judged here.
    /// - Throws: ``StrataError/schemaMismatch(storeVersion:modelVersion:differences:)`` listing
    ///   the differences from the plan's schema of that version.
    private func refuseUnknownEntities(in stored: RecordedSchema, storeVersion: Int) throws(StrataError) {
        guard let claimed = migrationPlan?.versions.first(where: { $0.version == storeVersion })?.recorded else {
            return
        }
        let known = Set(claimed.entities.map(\.name))
        guard stored.entities.contains(where: { !known.contains($0.name) }) else { return }
        throw .schemaMismatch(
            storeVersion: storeVersion, modelVersion: storeVersion,
            differences: RecordedSchema.differences(from: stored, to: claimed))
    }
}

extension RecordedSchemaCheck {
    fileprivate var outcome: RecordedSchemaOutcome {
        switch self {
        case .matches: .matches
        case .recordNow: .recordNow
        }
    }
}

/// One migration at open: the stages still to run, the store's current shape, and progress.
private struct MigrationRun<Session: StoreMigrationSession> {
    let storeVersion: Int
    let model: StoreSchema
    var current: RecordedSchema
    let session: Session
    private var stagesDone = 0
    private let stageCount: Int
    private let stages: [(from: StoreSchema?, stage: StoreMigrationStage?, to: StoreSchema)]

    init(storeVersion: Int, model: StoreSchema, current: RecordedSchema, session: Session) {
        self.storeVersion = storeVersion
        self.model = model
        self.current = current
        self.session = session
        var stages: [(from: StoreSchema?, stage: StoreMigrationStage?, to: StoreSchema)] = []
        if let plan = model.migrationPlan {
            for (index, stage) in plan.stages.enumerated() where stage.fromVersion >= storeVersion {
                if stages.isEmpty, stage.fromVersion > storeVersion {
                    // The plan does not list the store's version: infer the way to the first version it lists.
                    stages.append((from: nil, stage: nil, to: plan.versions[index]))
                }
                stages.append((from: plan.versions[index], stage: stage, to: plan.versions[index + 1]))
            }
            if stages.isEmpty, let first = plan.versions.first(where: { $0.version > storeVersion }),
                first.version < model.version
            {
                stages.append((from: nil, stage: nil, to: first))
            }
        }
        if stages.last?.to.recorded != model.recorded {
            stages.append((from: nil, stage: nil, to: model))
        }
        self.stages = stages
        self.stageCount = stages.count
    }

    mutating func perform() throws(StrataError) {
        report(rows: 0, of: 0, stageFraction: 0)
        for (from, stage, to) in stages {
            if let stage, stage.isCustom, let from {
                try migrateByInference(to: from, allowingReplacement: false)
                try run(stage.willMigrate, on: from, stage: stage)
                try migrateByInference(to: to, allowingReplacement: true, forced: true)
                try run(stage.didMigrate, on: to, stage: stage)
            } else {
                try migrateByInference(to: to, allowingReplacement: false, forced: true)
            }
            stagesDone += 1
            report(rows: 0, of: 0, stageFraction: 0)
        }
    }

    /// Brings the store from `current` to `target` by inference (nothing when they already
    /// match, unless `forced`, which still records the target's version).
    private mutating func migrateByInference(
        to target: StoreSchema, allowingReplacement: Bool, forced: Bool = false
    ) throws(StrataError) {
        guard let recorded = target.recorded else { return }
        guard forced || current != recorded else { return }
        let plan = try SchemaMigrationPlan.infer(
            from: current, to: recorded, renames: target.renames, allowingReplacement: allowingReplacement,
            storeVersion: storeVersion)
        // The closure keeps a copy of the run as it is now, with this stage's count of stages done.
        // An engine reports each step's rows from 0 (PostgreSQL fills one added column after
        // another): the stage's fraction keeps its highest, so the whole never goes back.
        let highest = StageFraction()
        let progress = MigrationRowProgress { [self] rows, total in
            highest.value = max(highest.value, total > 0 ? Double(rows) / Double(total) : 0)
            report(rows: rows, of: total, stageFraction: highest.value)
        }
        try session.apply(plan, to: target, progress: progress)
        current = recorded
    }

    private func run(
        _ body: (@Sendable (any StorageEngine) throws -> Void)?, on schema: StoreSchema, stage: StoreMigrationStage
    ) throws(StrataError) {
        guard let body else { return }
        let engine = try session.transactionEngine(for: schema)
        defer { engine.close() }
        do {
            try body(engine)
        } catch let error as StrataError {
            switch error {
            // A full store passes through as it is, so that an engine that can grow it runs the
            // migration again (LMDB's map); a nested stage failure is already described.
            case .migrationStageFailed, .storeFull: throw error
            default: break
            }
            throw .migrationStageFailed(
                fromVersion: stage.fromVersion, toVersion: stage.toVersion, reason: error.description)
        } catch {
            throw .migrationStageFailed(
                fromVersion: stage.fromVersion, toVersion: stage.toVersion, reason: String(describing: error))
        }
    }

    private func report(rows: Int, of total: Int, stageFraction: Double) {
        guard let progress = model.migrationPlan?.progress else { return }
        let count = max(stageCount, 1)
        let stage = min(stagesDone + 1, count)
        let fraction = min((Double(stagesDone) + stageFraction) / Double(count), 1)
        progress(
            MigrationProgress(
                storeVersion: storeVersion, modelVersion: model.version, stage: stage, stageCount: count,
                rowsMigrated: rows, rowsToMigrate: total, fractionCompleted: fraction))
    }
}

/// The highest fraction of a stage reported so far (one migration's thread only).
private final class StageFraction {
    var value = 0.0
}
