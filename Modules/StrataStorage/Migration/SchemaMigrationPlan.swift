/// An inferred migration: the store's recorded schema, the model's, and the steps between them.
///
/// The core's planner (``infer(from:to:renames:)``) makes it from the two recorded schemas; an
/// engine applies it at open, in the one transaction that also records ``target``
/// (``SchemaMigrationApplier``). A plan is a value: making one reads and writes nothing.
///
/// ```swift
/// let plan = try SchemaMigrationPlan.infer(from: stored, to: model)
/// for step in plan.steps { print(step) }
/// ```
public struct SchemaMigrationPlan: Sendable, Hashable {
    /// The schema the store recorded before the migration.
    public var source: RecordedSchema
    /// The model's schema, which the store records after the migration.
    public var target: RecordedSchema
    /// The steps, in the order an engine applies them.
    public var steps: [SchemaMigrationStep]

    /// A plan.
    public init(source: RecordedSchema, target: RecordedSchema, steps: [SchemaMigrationStep]) {
        self.source = source
        self.target = target
        self.steps = steps
    }
}

/// An engine's side of an inferred migration: it applies a plan inside its opening write transaction.
///
/// The engine's object that holds the opening transaction conforms (through
/// ``StoreMigrationSession``). ``StoreSchema/reconcileRecorded(storeVersion:recordedJSON:path:session:)``
/// calls ``apply(_:to:progress:)`` once per stage it runs, before the engine commits that transaction.
///
/// Contract:
/// - apply every step of ``SchemaMigrationPlan/steps`` in order, with the data of existing rows
///   kept (``SchemaMigrationStep`` says what each one keeps and fills);
/// - write ``SchemaMigrationPlan/target`` (``RecordedSchema/jsonText()``) and its version as the
///   store's recorded schema **in the same transaction**;
/// - on any failure throw, and the caller rolls the whole transaction back: the store stays at
///   the old schema, byte for byte. An engine that cannot do all of it in one transaction builds
///   a new store beside the old one and swaps it in atomically.
///
/// ```swift
/// // Called by reconcileRecorded(storeVersion:recordedJSON:path:session:), once per stage:
/// try session.apply(plan, to: stageSchema, progress: progress)
/// ```
public protocol SchemaMigrationApplier {
    /// Applies `plan` and records its target schema, inside the current write transaction.
    /// - Parameters:
    ///   - plan: the steps and both recorded schemas.
    ///   - schema: the model's store schema (the physical layout after the migration).
    ///   - progress: receives the rows rewritten, for steps that rewrite rows.
    /// - Throws: ``StrataError/constraintViolation(entity:attributes:native:)`` when existing rows
    ///   break a unique constraint the plan adds; the engine's typed errors (``StrataError/io(_:native:)``,
    ///   ``StrataError/storeFull(_:native:)``, …) otherwise. The transaction must then be rolled back.
    func apply(
        _ plan: SchemaMigrationPlan, to schema: StoreSchema, progress: MigrationRowProgress
    ) throws(StrataError)
}
