public import Foundation
public import Strata
import Synchronization

/// Decides which commit, or which row write inside a commit, a ``FaultInjectingEngine`` fails.
///
/// Share one controller between the test and the engine configuration:
///
/// ```swift
/// let faults = FaultController()
/// let container = try PersistentContainer(schema: schema, engine: .faultInjecting(.sqlite(at: url), faults))
/// faults.inject(.failWrite(3))       // the 3rd row write of the next commit fails
/// ```
public final class FaultController: Sendable {
    /// A failure to inject.
    public enum Fault: Sendable, Hashable {
        /// The `n`th commit from now (1 = the next) throws before anything is written.
        case failCommit(Int)
        /// In the next commit, the `n`th row write (in the engine's apply order: deletes,
        /// updates, touches, inserts) fails inside the engine's transaction, after the writes
        /// before it were applied; the engine must roll them all back. When the commit has
        /// fewer writes, it succeeds and the fault is spent.
        case failWrite(Int)
    }

    private struct State {
        var fault: Fault?
        var commitsSeen = 0
        var injected = 0
    }

    private let state = Mutex(State())

    public init() {}

    /// Arms a fault, replacing any armed one, and restarts the commit count.
    public func inject(_ fault: Fault) {
        state.withLock {
            $0.fault = fault
            $0.commitsSeen = 0
        }
    }

    /// Disarms any armed fault.
    public func clear() {
        state.withLock { $0.fault = nil }
    }

    /// How many failures were injected so far.
    public var injectedCount: Int { state.withLock { $0.injected } }

    /// The action for the next commit with `writes` row writes.
    func nextCommit(writes: Int) -> Action {
        state.withLock { state in
            guard let fault = state.fault else { return .pass }
            state.commitsSeen += 1
            switch fault {
            case .failCommit(let n):
                guard state.commitsSeen == n else { return .pass }
                state.fault = nil
                state.injected += 1
                return .failBeforeWriting
            case .failWrite(let n):
                state.fault = nil
                guard n >= 1, n <= writes else { return .pass }
                state.injected += 1
                return .damageWrite(n)
            }
        }
    }

    enum Action {
        case pass
        case failBeforeWriting
        case damageWrite(Int)
    }
}

/// A ``StorageEngine`` that forwards to a real engine and fails commits on demand, as an I/O
/// error would. Reads, key allocation and metadata pass through unchanged.
///
/// A failed write is produced inside the real engine's transaction: the chosen row is made
/// invalid (a wrong value count, or an impossible expected version), so the engine applies the
/// writes before it, then fails and must roll back. The caller sees ``StrataError/io(_:)``.
public final class FaultInjectingEngine: StorageEngine {
    let base: any StorageEngine
    let controller: FaultController

    init(base: any StorageEngine, controller: FaultController) {
        self.base = base
        self.controller = controller
    }

    public var storeIdentifier: UUID { base.storeIdentifier }
    public var schemaVersion: Int { base.schemaVersion }
    public func makeReader() throws -> any StoreReader { try base.makeReader() }
    public func allocateKeys(entity: Int, count: Int) throws -> Range<Int64> { try base.allocateKeys(entity: entity, count: count) }
    public func close() { base.close() }

    public func commit(_ changes: ChangeSet) throws {
        let writes = changes.deletes.count + changes.updates.count + changes.touches.count + changes.inserts.count
        switch controller.nextCommit(writes: writes) {
        case .pass:
            try base.commit(changes)
        case .failBeforeWriting:
            throw StrataError.io("injected failure: the commit failed before writing")
        case .damageWrite(let n):
            do {
                try base.commit(Self.damaging(changes, write: n))
            } catch {
                throw StrataError.io("injected failure at row write \(n) of \(writes): \(error)")
            }
            throw StrataError.misuse("the engine accepted a damaged write \(n); it must reject it")
        }
    }

    /// The change set with its `n`th row write made invalid.
    static func damaging(_ changes: ChangeSet, write n: Int) -> ChangeSet {
        var damaged = changes
        var index = n - 1
        if index < damaged.deletes.count {
            damaged.deletes[index].expectedVersion = Int64.max
            return damaged
        }
        index -= damaged.deletes.count
        if index < damaged.updates.count {
            damaged.updates[index].values.append(.null)
            return damaged
        }
        index -= damaged.updates.count
        if index < damaged.touches.count {
            damaged.touches[index].expectedVersion = Int64.max
            return damaged
        }
        index -= damaged.touches.count
        damaged.inserts[index].values.append(.null)
        return damaged
    }
}

extension EngineConfiguration {
    /// Wraps an engine configuration so `controller` can fail its commits.
    ///
    /// ```swift
    /// let faults = FaultController()
    /// let engine = EngineConfiguration.faultInjecting(.lmdb(at: url), faults)
    /// ```
    public static func faultInjecting(_ base: EngineConfiguration, _ controller: FaultController) -> EngineConfiguration {
        EngineConfiguration(name: "\(base.name)+faults", location: base.location) { schema in
            FaultInjectingEngine(base: try base.open(schema), controller: controller)
        }
    }
}
