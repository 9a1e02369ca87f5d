import Foundation
import StrataStorage
import Synchronization

/// The in-memory engine: one engine per container, over a store of this process shared by name.
///
/// Every engine on a store sees the same state: a reader takes the current state as its snapshot
/// (a value, copy-on-write), a commit builds the next state on a copy and swaps it in under the
/// store's lock, checking versions, guards, unique indexes and cursors as a durable engine does.
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
    ///   `.migrationStageFailed`, `.constraintViolation`).
    static func open(name: String, schema: StoreSchema) throws(StrataError) -> MemoryEngine {
        guard !name.isEmpty else {
            throw .misuse("an in-memory store needs a name of one character or more; .inMemory(name:) got \"\"")
        }
        let store = MemoryRegistry.acquire(name)
        do {
            let (identifier, generation) = try store.state.withLock { (state) throws(StrataError) in
                let opened = try Self.reconcile(state, name: name, schema: schema)
                state = opened
                return (opened.identifier, opened.generation)
            }
            return MemoryEngine(store: store, identifier: identifier, version: schema.version, generation: generation)
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
    func write<T: Sendable>(_ body: (inout MemoryState) throws(StrataError) -> T) throws(StrataError) -> T {
        try checkOpen()
        let (result, token) = try store.state.withLock { (state) throws(StrataError) in
            var working = try checked(state)
            let before = working.lastToken
            let result = try body(&working)
            state = working
            return (result, working.lastToken == before ? nil : working.lastToken)
        }
        if let token { store.signal.committed(token) }
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

    func allocateKeys(entity: Int, count: Int) throws -> Range<Int64> {
        try write { (state) throws(StrataError) in try state.allocateKeys(entity: entity, count: count) }
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
