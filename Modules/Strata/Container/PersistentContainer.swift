public import Foundation
public import StrataStorage

/// A store opened with a schema on a chosen engine: the usual ``ContextFactory``.
///
/// ```swift
/// let schema = try Schema(version: 1, [Account.self, Transaction.self])
/// let container = try PersistentContainer(schema: schema, engine: .sqlite(at: storeURL))
/// let context = container.newBackgroundContext()
/// ```
///
/// The container is `Sendable` and meant to live as long as the app uses the store. Contexts
/// are cheap: make one per unit of work.
///
/// Lifetime rule: the store stays open while the container **or any context made from it**
/// is alive; it closes when the last of them is released, never under a context that is
/// still reading or saving. To close it at a chosen moment, call ``close()``: from then on
/// new reads and saves through any of its contexts throw ``StrataStorage/StrataError/misuse(_:native:)``, while a
/// read snapshot or commit already under way finishes safely.
public final class PersistentContainer: ContextFactory {
    /// The schema the store was opened with.
    public let schema: Schema
    /// The engine configuration chosen at init (for the package's tools and tests; users keep
    /// their own copy of what they passed).
    package let configuration: EngineConfiguration
    let engine: any StorageEngine
    /// The store's history watch, shared by this container's contexts and observers; nil when
    /// the engine keeps no history.
    let changeHub: ChangeHub?
    /// Whether this container's contexts append persistent history (see
    /// ``init(schema:engine:recordsHistory:)``).
    public let recordsHistory: Bool
    /// The event hook given at init (see ``Instrumentation``); nil when none was.
    public let instrumentation: Instrumentation?
    /// Where this container's `performUnitOfWork` attempts enter, so that a re-run after a
    /// conflict runs alone in the process (see ``UnitOfWorkGate``).
    let unitOfWorkGate = UnitOfWorkGate()
    /// What every context this container makes shares (one reference per context).
    private let contextEnvironment: ContextEnvironment

    /// Opens (creating if needed) the store; an older store is migrated to the schema when every
    /// change can be inferred (see `Docs/Migrations.md`; for staged migrations with code, use
    /// ``init(schema:migrationPlan:engine:progress:recordsHistory:)``).
    /// - Parameters:
    ///   - schema: the model classes and version.
    ///   - engine: the engine and location, e.g. `.sqlite(at: url)` or `.lmdb(at: url)`.
    ///   - recordsHistory: whether saves append persistent history (on by default; see
    ///     `Docs/Observation.md`). Turning it off saves its cost, but then no observer, in this
    ///     process or another, learns of this container's saves.
    /// - Throws: ``StrataStorage/StrataError/schemaMismatch(storeVersion:modelVersion:differences:)`` for a store
    ///   whose recorded schema differs from the model's at the same version (listed in the error),
    ///   ``StrataStorage/StrataError/migrationNotInferable(storeVersion:modelVersion:refused:)`` for an older store
    ///   whose changes need code, ``StrataStorage/StrataError/storeNewerThanModel(storeVersion:modelVersion:)`` for
    ///   a store written by a newer model, ``StrataStorage/StrataError/notAStore(path:reason:native:)`` for a file
    ///   that is not a store of this engine or for the target of a `strata copy` that has not
    ///   finished, and engine errors (`.io`, `.busy`, `.storeCorrupt`).
    public convenience init(schema: Schema, engine: EngineConfiguration, recordsHistory: Bool = true) throws {
        try self.init(
            schema: schema, storeSchema: schema.storeSchema, engine: engine, recordsHistory: recordsHistory,
            instrumentation: nil)
    }

    /// Opens the store with `storeSchema` (the schema's, with a migration plan when there is one).
    init(
        schema: Schema, storeSchema: StoreSchema, engine: EngineConfiguration, recordsHistory: Bool,
        instrumentation: Instrumentation?
    ) throws {
        self.schema = schema
        self.configuration = engine
        self.instrumentation = instrumentation
        let opened = try engine.open(storeSchema)
        try UnfinishedCopy.refuseOpening(
            opened, at: engine.location.isFileURL ? engine.location.path : engine.location.absoluteString)
        self.engine = opened
        self.changeHub = (opened as? any HistoryStore).map { ChangeHub(engine: $0, instrumentation: instrumentation) }
        self.recordsHistory = recordsHistory && changeHub != nil
        self.contextEnvironment = ContextEnvironment(
            engine: opened, schema: schema, instrumentation: instrumentation, unitOfWorkGate: unitOfWorkGate,
            changeHub: self.recordsHistory ? changeHub : nil)
    }

    /// Closes the store now instead of when the container and its last context are released.
    ///
    /// ```swift
    /// let container = try PersistentContainer(schema: schema, engine: .lmdb(at: url))
    /// defer { container.close() }
    /// ```
    /// After `close()`, every context made from this container throws
    /// ``StrataStorage/StrataError/misuse(_:native:)`` from its next `save()`, `fetch`, `count` or
    /// `existingObject` call. Snapshots begun before `close()` stay readable until their
    /// `perform` returns; a save that was already committing either completes or throws
    /// `.misuse` and writes nothing. It never crashes or hangs. Calling it again does nothing.
    public func close() {
        engine.close()
    }

    /// A new context on its own serial queue. See ``ObjectContext``.
    public func newBackgroundContext() -> ObjectContext {
        makeContext(named: nil)
    }

    /// A new context with a name that appears in misuse messages.
    public func newBackgroundContext(named name: String) -> ObjectContext {
        makeContext(named: name)
    }

    private func makeContext(named name: String?) -> ObjectContext {
        ObjectContext(environment: contextEnvironment, name: name)
    }

    /// The store's UUID, as carried by every object ID.
    public var storeIdentifier: UUID { engine.storeIdentifier }
}
