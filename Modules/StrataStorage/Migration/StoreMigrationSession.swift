/// An engine's side of a migration: the object that holds the store's opening write transaction.
///
/// An engine makes one at open, inside the write transaction that reads its metadata, and passes
/// it to ``StoreSchema/reconcileRecorded(storeVersion:recordedJSON:path:session:)``, which runs
/// every stage through it. When that returns, the engine commits the transaction; when it throws,
/// the engine rolls back, and the store is left exactly as it was.
///
/// Contract, beyond ``SchemaMigrationApplier``'s:
/// - ``transactionEngine(for:)`` returns a ``StorageEngine`` laid out as the given schema whose
///   readers see this transaction's writes so far and whose commits write into this transaction
///   (not durable until the open commits). A failed commit through it undoes its own writes only
///   (a savepoint or nested transaction) and throws as a normal commit does. It is used only on
///   the thread that runs the opening transaction (the driver calls the closures there), and is
///   closed by the caller before the open commits; after ``StorageEngine/close()`` every call
///   throws ``StrataError/misuse(_:native:)``.
///
/// ```swift
/// let outcome = try schema.reconcileRecorded(storeVersion: v, recordedJSON: json, path: path, session: session)
/// ```
public protocol StoreMigrationSession: SchemaMigrationApplier {
    /// An engine over the open transaction, laid out as `schema`, for a custom stage's closures.
    /// - Throws: the engine's typed errors.
    func transactionEngine(for schema: StoreSchema) throws(StrataError) -> any StorageEngine
}

/// Receives the rows an engine rewrites while it applies a ``SchemaMigrationPlan``.
///
/// Engines call ``rowsMigrated(_:of:)`` now and then (every few thousand rows, and at the end of a
/// table) while they rewrite or copy rows; steps that rewrite nothing need not call it.
///
/// ```swift
/// progress.rowsMigrated(done, of: total)
/// ```
public final class MigrationRowProgress {
    private let report: (Int, Int) -> Void

    /// A receiver that calls `report` with (rows done, rows to do).
    public init(_ report: @escaping (Int, Int) -> Void) { self.report = report }

    /// A receiver that ignores every report.
    public static var ignored: MigrationRowProgress { MigrationRowProgress { _, _ in } }

    /// Reports `done` rows rewritten out of `total` in the current step.
    public func rowsMigrated(_ done: Int, of total: Int) { report(done, total) }
}
