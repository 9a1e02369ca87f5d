import Dispatch
public import Foundation
import StrataStorage
import Synchronization

/// A scratchpad of objects over one store, confined to its own serial queue.
///
/// The pattern Strata is built for: each unit of work takes a **fresh** context from a
/// ``ContextFactory``, runs whole inside `try await context.perform { }`, and ends with one
/// atomic ``save()``. If the work throws, its unsaved changes die with the context.
///
/// ```swift
/// func rename(_ accountID: ObjectID, to name: String) async throws {
///     let context = container.newBackgroundContext()
///     try await context.perform {
///         let account = try context.existingObject(with: accountID, as: Account.self)
///         account.name = name
///         try context.save()
///     }
/// }
/// ```
///
/// Lifetime rule: every API of a context, and of the objects it holds, must be called inside
/// that context's ``perform(_:)``. Calls from anywhere else are programming errors: throwing
/// calls throw ``StrataStorage/StrataError/misuse(_:native:)``, the others stop the program with a message naming
/// the call. Objects never leave `perform` (its result must be `Sendable`); pass
/// ``StrataStorage/ObjectID``s instead. A context is cheap: make one per operation and let it go.
public final class ObjectContext: @unchecked Sendable {
    /// The store, schema, hook, gate, history hub and store identifier: the container's, shared
    /// with its other contexts (a migration stage's context has one of its own).
    let environment: ContextEnvironment
    let link: ContextLink
    let queue: DispatchQueue

    /// A name for debugging, shown in misuse messages.
    public let name: String?

    // State below is confined to `queue` (checked by `checkInside`).
    /// The identity map and change lists (see ``ContextObjects``; the properties of the same
    /// names below forward to it).
    let objects: ContextObjects
    var pendingLinks: [JoinChangeKey: JoinChange] = [:]
    var reader: (any StoreReader)?
    var policy: MergePolicy = .error
    /// The `perform` call whose body is running (cancellation flag, blocked-perform detection).
    var currentPerform: PerformToken?
    /// Inserts refused because the class is not in the schema: the next `save()` throws the first.
    var refusedInserts: [StrataError] = []
    /// The first relationship that could not be loaded since the last rollback or reset (a
    /// damaged row, a lost connection): a relationship read cannot throw, so it answers empty, and
    /// ``save()`` and the end of the body throw this instead (``recordFailedLoad(_:)``).
    var failedLoad: (any Error)?
    /// Whether `save()` is running the objects' `validateForSave()` overrides, and whether one of
    /// them called `rollback()` or `reset()` meanwhile (the save then writes nothing and throws).
    var validation = ValidationPhase.idle
    /// Whether `rollback()` (of inserts) or `reset()` made objects of this context invalid: only
    /// then must `save()` look for changes to them.
    var hasForgottenObjects = false
    /// The entity of the ``forEachBatch(of:size:_:)`` whose body is running, if any: its batches
    /// read one snapshot, which ``save()`` would end after writing part of the work.
    var streamingEntity: String?
    /// Saves this context has committed (``ContextFactory/performUnitOfWork(retries:_:)`` does not
    /// re-run a body whose save committed before it threw).
    var committedSaves = 0
    /// Saved objects whose rows must still have the version read when the next `save()` commits.
    var unchangedRequirements: [ManagedObject] = []
    /// Fetch results that must be unchanged when the next `save()` commits (``requireUnchangedResults(of:)``).
    var resultGuards: [ResultSetGuard] = []
    /// History cursors the next `save()` moves in its commit (``moveHistoryCursor(_:from:to:)``).
    var pendingCursorMoves: [HistoryCursorMove] = []
    /// Batch inserts, updates and deletes the next `save()` commits with the rest, in issue order.
    var pendingBatches: [StagedBatch] = []
    /// What the batches of the last successful save did (``savedBatches``).
    var lastBatchResults: [BatchResult] = []
    /// With history on: per saved object, the to-many relationships changed since the last save.
    var changedToMany: [ObjectIdentifier: Set<Int>] = [:]
    /// While a query observation evaluates its closure: the entities this context reads.
    var readRegion: ReadRegion?
    /// Backs ``transactionAuthor`` (settable from any thread).
    let authorName = Mutex<String?>(nil)

    /// A context in `environment` (its container's, shared by all the container's contexts).
    init(environment: ContextEnvironment, name: String?) {
        self.environment = environment
        self.name = name
        self.link = ContextLink(storeIdentifier: environment.storeIdentifier)
        self.queue = name.map { DispatchQueue(label: "strata.context.\($0)") } ?? ContextQueues.take()
        self.objects = ContextObjects(entityCount: environment.schema.models.count)
        link.context = self
    }

    /// A context of no container (a migration stage's): no hook, no gate, no history.
    convenience init(engine: any StorageEngine, schema: Schema, name: String?) {
        self.init(
            environment: ContextEnvironment(
                engine: engine, schema: schema, instrumentation: nil, unitOfWorkGate: nil, changeHub: nil),
            name: name)
    }

    /// The store.
    var engine: any StorageEngine { environment.engine }
    /// The schema.
    var schema: Schema { environment.schema }
    /// The container's event hook; nil (the usual case) reports nothing and costs a load and a test.
    var instrumentation: Instrumentation? { environment.instrumentation }
    /// Where `performUnitOfWork` attempts of the container that made this context enter; nil for
    /// a context of no container (its units of work are not ordered).
    var unitOfWorkGate: UnitOfWorkGate? { environment.unitOfWorkGate }
    /// Where saves record their history; nil for a context that records none.
    var changeHub: ChangeHub? { environment.changeHub }

    deinit {
        link.context = nil
        reader?.close()
        if name == nil { ContextQueues.recycle(queue) }
    }

    /// Whether the caller is inside this context's `perform`.
    public var isInsidePerform: Bool {
        link.ownerThread.load(ordering: .relaxed) == CurrentThread.id
    }

    /// Throws `.misuse` unless called inside `perform`.
    func checkInside(_ api: @autoclosure () -> String) throws(StrataError) {
        guard isInsidePerform else { throw .misuse(outsideMessage(api())) }
    }

    /// Stops the program unless called inside `perform` (for non-throwing APIs).
    func requireInside(_ api: @autoclosure () -> String) {
        guard isInsidePerform else { Misuse.fail(outsideMessage(api())) }
    }

    private func outsideMessage(_ api: String) -> String {
        """
        \(api) was called outside the context's perform { }\(name.map { " (context \($0))" } ?? ""). Move the \
        call inside `try await context.perform { … }`.
        """
    }

    /// The read snapshot for this `perform`, begun on first use.
    func snapshot() throws -> any StoreReader {
        if let reader { return reader }
        return try beginSnapshot()
    }

    /// Begins the snapshot (kept apart from ``snapshot()``, whose every call but the first
    /// returns the reader at once, so that it stays small enough to inline).
    private func beginSnapshot() throws -> any StoreReader {
        var made: any StoreReader
        if let instrumentation {
            let engine = self.engine
            made = InstrumentedReader(
                try instrumentation.timed(.snapshot, entity: nil) { try engine.makeReader() }, hook: instrumentation,
                schema: schema)
        } else {
            made = try engine.makeReader()
        }
        if let readRegion { made = RegionRecordingReader(made, region: readRegion, joins: schema.storeSchema.joins) }
        reader = made
        return made
    }

    /// Ends the current snapshot; the next read begins a fresh one.
    func endSnapshot() {
        reader?.close()
        reader = nil
    }

    /// The schema's model for exactly this class, found without the model registry's lock.
    func schemaModel(of type: ManagedObject.Type) -> EntityModel? {
        let wanted = ObjectIdentifier(type)
        for model in schema.models where ObjectIdentifier(model.type) == wanted { return model }
        return nil
    }

    /// The entity number of a model in this context's schema.
    /// - Throws: `.misuse` naming the class and the schema's entities when the model is not in it.
    func entityNumber(_ model: EntityModel) throws(StrataError) -> Int {
        // Schemas are small: a scan by identity beats hashing.
        for (number, candidate) in schema.models.enumerated() where candidate === model { return number }
        throw notInSchema(model.name, type: model.type)
    }

    /// The error for an entity class that is not in this context's schema: `type`, whose entity
    /// is `entityName`. When the schema has an entity of that name through another class (a class
    /// of another schema version, as in a migration stage), the message says which class to use.
    func notInSchema(_ entityName: String, type: Any.Type) -> StrataError {
        if let listed = schema.model(named: entityName) {
            return .misuse(
                """
                \(String(reflecting: type)) is not the class this container's schema uses for the entity \
                \(entityName): that is \(String(reflecting: listed.type)). Classes of another schema version do not \
                mix (in a migration stage, willMigrate sees the old version's classes and didMigrate the new \
                version's); use \(String(reflecting: listed.type)).
                """
            )
        }
        return .misuse(
            """
            \(entityName) is not in this container's schema (its entities: \
            \(schema.entityNames.joined(separator: ", "))). Add \(entityName).self to the Schema the container is \
            created with, or use a container whose schema lists it.
            """
        )
    }

    /// Whether there are unsaved inserts, updates or deletes, or staged batches. An object
    /// inserted and deleted again before a save is no change (it is never written), though the
    /// changes it made to saved objects' relationships while it was related to them are.
    public var hasChanges: Bool {
        requireInside("ObjectContext.hasChanges")
        return !updated.isEmpty || !touched.isEmpty || !pendingLinks.isEmpty || !refusedInserts.isEmpty
            || !pendingBatches.isEmpty || inserted.contains { !$0.state.contains(.deleted) }
            || deleted.contains { !$0.state.contains(.inserted) }
    }

    /// Objects inserted since the last save, but those deleted again before it (which are never
    /// written; nor are they in ``deletedObjects``).
    public var insertedObjects: Set<ManagedObject> {
        requireInside("ObjectContext.insertedObjects")
        return Set(inserted.filter { !$0.state.contains(.deleted) })
    }

    /// Saved objects changed since the last save (including relationship changes).
    public var updatedObjects: Set<ManagedObject> {
        requireInside("ObjectContext.updatedObjects")
        return Set(updated + touched.filter { !$0.state.contains(.updated) })
    }

    /// Saved objects marked for deletion at the next save.
    public var deletedObjects: Set<ManagedObject> {
        requireInside("ObjectContext.deletedObjects")
        return Set(deleted.filter { $0.key > 0 && !$0.state.contains(.inserted) })
    }

    /// The store's UUID, as carried by object IDs.
    public var storeIdentifier: UUID { link.storeIdentifier }
}

extension ObjectContext {
    /// The identity map: per entity number, the one instance of each row this context holds.
    var registry: [IdentityMap] {
        @inline(__always) get { objects.registry }
        @inline(__always) _modify { yield &objects.registry }
    }
    var inserted: [ManagedObject] {
        @inline(__always) get { objects.inserted }
        @inline(__always) _modify { yield &objects.inserted }
    }
    var updated: [ManagedObject] {
        @inline(__always) get { objects.updated }
        @inline(__always) _modify { yield &objects.updated }
    }
    var deleted: [ManagedObject] {
        @inline(__always) get { objects.deleted }
        @inline(__always) _modify { yield &objects.deleted }
    }
    var touched: [ManagedObject] {
        @inline(__always) get { objects.touched }
        @inline(__always) _modify { yield &objects.touched }
    }
    var relationDirty: [ManagedObject] {
        @inline(__always) get { objects.relationDirty }
        @inline(__always) _modify { yield &objects.relationDirty }
    }
    var temporaries: TemporaryMap {
        @inline(__always) get { objects.temporaries }
        @inline(__always) _modify { yield &objects.temporaries }
    }
}

/// Serial queues of unnamed contexts that were let go, handed to new contexts: a context per
/// operation should not cost a dispatch queue made and destroyed each time.
///
/// A queue is recycled only from its context's `deinit`. Every `perform` block holds its context,
/// so by then no work of that context is waiting on the queue (at most the block that held the
/// last reference is finishing), and the next context's work simply runs after it, in order.
private enum ContextQueues {
    private static let idle = Mutex<[DispatchQueue]>([])
    private static let limit = 64

    static func take() -> DispatchQueue {
        idle.withLock { $0.popLast() } ?? DispatchQueue(label: "strata.context")
    }

    static func recycle(_ queue: DispatchQueue) {
        idle.withLock { queues in
            if queues.count < limit { queues.append(queue) }
        }
    }
}

/// Identifies one pending many-to-many change.
struct JoinChangeKey: Hashable {
    let join: Int
    let left: ObjectIdentifier
    let right: ObjectIdentifier
}

/// A pending many-to-many link or unlink between two objects.
struct JoinChange {
    let join: Int
    let left: ManagedObject
    let right: ManagedObject
    var isLink: Bool
}
