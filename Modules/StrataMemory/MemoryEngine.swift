import Foundation
import StrataStorage
import Synchronization

/// The in-memory engine: one engine per container, over a store of this process shared by name.
///
/// Every engine on a store sees the same state: a reader takes the current state as its snapshot
/// (a value made of persistent trees, which later commits never change), a commit builds the
/// next state from it, sharing every node it does not change, and swaps it in, checking
/// versions, guards, unique indexes and cursors as a durable engine does. Writers take turns;
/// readers never wait for them.
/// An engine opened before a migration of the store (by another container) refuses every read
/// and write with `.storeNewerThanModel`, as a process on the old model does on a file store.
final class MemoryEngine: SetWritingEngine, HistorySignalling {
    /// The engine's name in configurations and messages.
    static let name = "memory"

    let store: MemoryStore
    let storeIdentifier: UUID
    let schemaVersion: Int
    /// The store's migration count when this engine opened.
    private let generation: Int
    private let closed = Atomic<Bool>(false)

    private init(store: MemoryStore, identifier: UUID, version: Int, generation: Int) {
        self.store = store
        self.storeIdentifier = identifier
        self.schemaVersion = version
        self.generation = generation
    }

    deinit { close() }

    /// Opens (creating if needed) the store `name` of this process with `schema`.
    /// - Throws: `.misuse` for an empty name; the errors of
    ///   ``StrataStorage/StoreSchema/reconcileRecorded(storeVersion:recordedJSON:path:session:)``
    ///   (`.schemaMismatch`, `.storeNewerThanModel`, `.migrationNotInferable`,
    ///   `.migrationStageFailed`, `.constraintViolation`); `.busy` for an open from inside this
    ///   store's migration on the same thread, or one that waited ``MemoryStore/openWait`` in vain
    ///   (``MemoryStore/lockForOpen()``).
    static func open(name: String, schema: StoreSchema) throws(StrataError) -> MemoryEngine {
        guard !name.isEmpty else {
            throw .misuse("an in-memory store needs a name of one character or more; .inMemory(name:) got \"\"")
        }
        let store = MemoryRegistry.acquire(name)
        do {
            try store.lockForOpen()
            defer { store.unlockAfterOpen() }
            var opened = try Self.reconcile(store.state.withLock { $0 }, name: name, schema: schema)
            store.state.withLock { state in
                // Keys allocated meanwhile count, unless a migration laid the store out anew.
                if let live = state, live.generation == opened.generation { opened.lastKeys = live.lastKeys }
                state = opened
            }
            return MemoryEngine(
                store: store, identifier: opened.identifier, version: schema.version, generation: opened.generation)
        } catch {
            MemoryRegistry.release(store)
            throw error
        }
    }

    /// The store's state after opening it with `schema`: a new store, or `state` as it was, or
    /// migrated.
    private static func reconcile(
        _ state: MemoryState?, name: String, schema: StoreSchema
    ) throws(StrataError) -> MemoryState {
        guard let state else { return try MemoryState(schema: schema) }
        let session = MemoryMigrationSession(state: state)
        let outcome = try schema.reconcileRecorded(
            storeVersion: state.schema.version, recordedJSON: state.recordedJSON, path: "in-memory store \(name)",
            session: session)
        var opened = session.working.state.withLock { $0 }
        if outcome == .recordNow { opened.recordedJSON = try schema.recorded?.jsonText() }
        let layout = opened.schema
        guard layout.version == schema.version, layout.entities == schema.entities, layout.joins == schema.joins
        else {
            throw .schemaMismatch(storeVersion: layout.version, modelVersion: schema.version)
        }
        return opened
    }

    // MARK: State access

    private func checkOpen() throws(StrataError) {
        if closed.load(ordering: .acquiring) {
            throw .misuse("the in-memory store \(String(reflecting: store.name)) was closed through this container")
        }
    }

    private func checked(_ state: MemoryState?) throws(StrataError) -> MemoryState {
        guard let state, state.generation == generation else {
            throw .storeNewerThanModel(
                storeVersion: state?.schema.version ?? schemaVersion, modelVersion: schemaVersion)
        }
        return state
    }

    /// The store's current state, for a snapshot.
    func current() throws(StrataError) -> MemoryState {
        try checkOpen()
        return try store.state.withLock { (state) throws(StrataError) in try checked(state) }
    }

    /// Runs `body` on a copy of the store's state and keeps the copy when `body` returns.
    ///
    /// Writers take turns (``MemoryStore/writer``); the state lock is held only to take the
    /// current state and to put the new one in its place, so readers never wait for `body`.
    /// The commit's history token is signalled before the next writer starts, in commit order.
    func write<T: Sendable>(_ body: (inout MemoryState) throws(StrataError) -> T) throws(StrataError) -> T {
        try checkOpen()
        store.writer.lock()
        defer { store.writer.unlock() }
        var working = try checked(store.state.withLock { $0 })
        let before = working.lastToken
        let result = try body(&working)
        store.state.withLock { [working] state in
            // Keys are allocated outside the writers' turns (``allocateKeys(entity:count:)``):
            // the live counters win over the ones this writer started from.
            var next = working
            if let live = state, live.generation == next.generation { next.lastKeys = live.lastKeys }
            state = next
        }
        if working.lastToken != before { store.signal.committed(working.lastToken) }
        return result
    }

    // MARK: StorageEngine

    func makeReader() throws -> any StoreReader {
        MemoryReader(state: try current())
    }

    func commit(_ changes: ChangeSet) throws {
        _ = try commitReturningResults(changes)
    }

    var acceptsSetWrites: Bool { true }

    func commitReturningResults(_ changes: ChangeSet) throws -> [SetWriteResult] {
        try write { (state) throws(StrataError) in try state.commit(changes) }
    }

    /// Reserves keys under the state lock alone, without waiting for a writer's turn: no commit
    /// changes the key counters, and ``write(_:)`` keeps the live ones when it swaps its state in.
    func allocateKeys(entity: Int, count: Int) throws -> Range<Int64> {
        try checkOpen()
        return try store.state.withLock { (state) throws(StrataError) in
            var current = try checked(state)
            state = nil // the counters are then held once, and change in place
            defer { state = current }
            return try current.allocateKeys(entity: entity, count: count)
        }
    }

    func close() {
        guard !closed.exchange(true, ordering: .acquiringAndReleasing) else { return }
        MemoryRegistry.release(store)
        store.signal.wakeAll()
    }

    // MARK: HistoryStore

    func currentHistoryToken() throws -> Int64 {
        try current().lastToken
    }

    func history(after token: Int64, limit: Int?) throws -> [HistoryTransaction] {
        try current().history(after: token, limit: limit)
    }

    func historyCursors() throws -> [String: Int64] {
        try current().cursors
    }

    func setHistoryCursor(_ name: String, to token: Int64?) throws {
        try write { (state) throws(StrataError) in try state.setCursor(name, to: token) }
    }

    @discardableResult
    func deleteHistory(before token: Int64, force: Bool) throws -> Int64 {
        try write { state in state.deleteHistory(before: token, force: force) }
    }

    // MARK: HistorySignalling

    func waitForHistory(after token: Int64, until deadline: ContinuousClock.Instant) -> Bool? {
        store.signal.wait(after: token, until: deadline) { closed.load(ordering: .acquiring) }
    }
}
