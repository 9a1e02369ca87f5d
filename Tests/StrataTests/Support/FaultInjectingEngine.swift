import Foundation
import Strata
import Synchronization

/// The test's handle on a ``FaultInjectingEngine``: which commits fail, and what the engine saw.
///
/// ```swift
/// let faults = FaultPlan()
/// let container = try store.open(schema: .ledger, faults: faults)
/// faults.failCommit(1)                    // the next commit throws StrataError.io
/// ```
final class FaultPlan: Sendable {
    private struct State {
        var commits = 0
        var failing: Set<Int> = []
        var injectedFailures = 0
        var storeCalls = 0
        var mainThreadCalls: [String] = []
    }

    private let state = Mutex(State())

    /// Makes the `n`th commit from now fail with `StrataError.io` before anything is written
    /// (1 is the next commit).
    func failCommit(_ n: Int = 1) {
        precondition(n >= 1, "commits are counted from 1")
        state.withLock { state in _ = state.failing.insert(state.commits + n) }
    }

    /// Commits attempted so far, failed ones included.
    var commits: Int { state.withLock { $0.commits } }
    /// Commits this plan made fail.
    var injectedFailures: Int { state.withLock { $0.injectedFailures } }
    /// Engine and reader calls seen.
    var storeCalls: Int { state.withLock { $0.storeCalls } }
    /// The engine and reader calls that ran on the main thread (there should be none).
    var mainThreadCalls: [String] { state.withLock { $0.mainThreadCalls } }

    /// Records one call and whether it ran on the main thread or the main actor's queue.
    fileprivate func record(_ call: String) {
        let onMain = MainQueue.isCurrent
        state.withLock {
            $0.storeCalls += 1
            if onMain { $0.mainThreadCalls.append(call) }
        }
    }

    /// Counts a commit; true when the plan says it fails.
    fileprivate func commitShouldFail() -> Int? {
        state.withLock {
            $0.commits += 1
            guard $0.failing.remove($0.commits) != nil else { return nil }
            $0.injectedFailures += 1
            return $0.commits
        }
    }
}

/// Tells whether the caller runs on the main thread or on the main dispatch queue, which is
/// where the main actor runs. (Under the Linux test runner the main queue may be drained by a
/// thread other than the process's first one, so `Thread.isMainThread` alone is not enough.)
enum MainQueue {
    private static let key = DispatchSpecificKey<Bool>()
    private static let marked: Bool = {
        DispatchQueue.main.setSpecific(key: key, value: true)
        return true
    }()

    static var isCurrent: Bool {
        precondition(marked)
        return Thread.isMainThread || DispatchQueue.getSpecific(key: key) == true
    }
}

/// A `StorageEngine` wrapper for tests: passes every call to a real engine, fails the commits a
/// ``FaultPlan`` names with `StrataError.io` (writing nothing), and records whether each call
/// ran on the main thread. Engine and reader calls happen inside a context's `perform`, so the
/// record shows where units of work ran.
final class FaultInjectingEngine: StorageEngine {
    let base: any StorageEngine
    let plan: FaultPlan

    init(wrapping base: any StorageEngine, plan: FaultPlan) {
        self.base = base
        self.plan = plan
    }

    var storeIdentifier: UUID { base.storeIdentifier }
    var schemaVersion: Int { base.schemaVersion }

    func makeReader() throws -> any StoreReader {
        plan.record("makeReader")
        return ObservedReader(base: try base.makeReader(), plan: plan)
    }

    func commit(_ changes: ChangeSet) throws {
        plan.record("commit")
        if let number = plan.commitShouldFail() {
            throw StrataError.io("injected fault: commit #\(number) failed before writing anything")
        }
        try base.commit(changes)
    }

    func allocateKeys(entity: Int, count: Int) throws -> Range<Int64> {
        plan.record("allocateKeys")
        return try base.allocateKeys(entity: entity, count: count)
    }

    func close() {
        base.close()
    }
}

/// A reader that records where each read runs.
private final class ObservedReader: StoreReader {
    let base: any StoreReader
    let plan: FaultPlan

    init(base: any StoreReader, plan: FaultPlan) {
        self.base = base
        self.plan = plan
    }

    func row(entity: Int, key: Int64) throws -> StoredRow? {
        plan.record("row")
        return try base.row(entity: entity, key: key)
    }

    func rows(for plan: FetchPlan) throws -> [StoredRow] {
        self.plan.record("rows")
        return try base.rows(for: plan)
    }

    func count(entity: Int, filter: Filter?) throws -> Int {
        plan.record("count")
        return try base.count(entity: entity, filter: filter)
    }

    func linkedKeys(join: Int, from side: JoinSide, key: Int64) throws -> [Int64] {
        plan.record("linkedKeys")
        return try base.linkedKeys(join: join, from: side, key: key)
    }

    func close() {
        base.close()
    }
}

extension EngineConfiguration {
    /// `base`, wrapped in a ``FaultInjectingEngine`` driven by `plan`.
    static func faultInjecting(_ base: EngineConfiguration, plan: FaultPlan) -> EngineConfiguration {
        EngineConfiguration(name: "\(base.name)+faults", location: base.location) { schema in
            FaultInjectingEngine(wrapping: try base.open(schema), plan: plan)
        }
    }
}

extension TestStore {
    /// Opens the store through a fault-injecting wrapper of this store's engine.
    func open(schema: Schema, faults: FaultPlan) throws -> PersistentContainer {
        try PersistentContainer(schema: schema, engine: .faultInjecting(configuration, plan: faults))
    }
}
