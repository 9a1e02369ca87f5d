import Strata
import StrataStorage
import Synchronization

/// A test's handle on a ``FaultInjectingEngine``: which commits, or which row write inside a
/// commit, fail, whether reads return rows of the wrong length — and what the engine saw.
///
/// Share one controller between the test and the engine configuration:
///
/// ```swift
/// let faults = FaultController()
/// let container = try PersistentContainer(schema: schema, engine: .faultInjecting(.sqlite(at: url), faults: faults))
/// faults.failCommit()          // the next commit throws StrataError.io, writing nothing
/// faults.busyCommits(2)        // the next 2 commits throw StrataError.busy, writing nothing
/// faults.failWrite(3)          // in the next commit, the 3rd row write fails inside the transaction
/// faults.misshapeRows(by: -1)  // every row read from now on lacks its last value
/// ```
public final class FaultController: Sendable {
    private struct State {
        var commits = 0
        var failingCommits: Set<Int> = []
        var busyCommits = 0
        var failingWrite: Int?
        var rowLengthChange = 0
        var injectedFailures = 0
        var storeCalls = 0
        var mainThreadCalls: [String] = []
    }

    private let state = Mutex(State())

    /// A controller with no fault armed.
    public init() {}

    /// Makes the `n`th commit from now (1 = the next) throw `StrataError.io` before anything
    /// is written.
    public func failCommit(_ n: Int = 1) {
        precondition(n >= 1, "commits are counted from 1")
        state.withLock { state in _ = state.failingCommits.insert(state.commits + n) }
    }

    /// Makes each of the next `count` commits throw `StrataError.busy` before anything is
    /// written, as an engine whose busy timeout ran out would.
    public func busyCommits(_ count: Int) {
        precondition(count >= 0, "a count of commits is 0 or more")
        state.withLock { $0.busyCommits = count }
    }

    /// In the next commit, makes the `n`th row write (in the engine's apply order: deletes,
    /// updates, touches, inserts) fail inside the engine's transaction, after the writes before
    /// it were applied; the engine must roll them back. If the commit has fewer writes it
    /// succeeds and the fault is spent.
    public func failWrite(_ n: Int) {
        precondition(n >= 1, "writes are counted from 1")
        state.withLock { $0.failingWrite = n }
    }

    /// Makes every row that the engine's readers return from now on `change` values longer
    /// (with integers) or, when negative, shorter: an engine that breaks its contract. 0 stops it.
    public func misshapeRows(by change: Int) {
        state.withLock { $0.rowLengthChange = change }
    }

    /// Disarms every pending fault.
    public func clear() {
        state.withLock {
            $0.failingCommits = []
            $0.busyCommits = 0
            $0.failingWrite = nil
            $0.rowLengthChange = 0
        }
    }

    /// Commits attempted so far, failed ones included.
    public var commits: Int { state.withLock { $0.commits } }
    /// Failures injected so far.
    public var injectedFailures: Int { state.withLock { $0.injectedFailures } }
    /// Engine and reader calls seen.
    public var storeCalls: Int { state.withLock { $0.storeCalls } }
    /// The engine and reader calls that ran on the main thread or the main queue (normally none).
    public var mainThreadCalls: [String] { state.withLock { $0.mainThreadCalls } }

    /// Records one call and whether it ran on the main thread.
    func record(_ call: String) {
        let onMain = MainQueue.isCurrent
        state.withLock {
            $0.storeCalls += 1
            if onMain { $0.mainThreadCalls.append(call) }
        }
    }

    /// `row` as the armed row-length fault leaves it (the row itself when none is armed).
    func shape(_ row: StoredRow) -> StoredRow {
        let change = state.withLock { $0.rowLengthChange }
        guard change != 0 else { return row }
        var row = row
        if change < 0 { row.values.removeLast(min(-change, row.values.count)) }
        if change > 0 { row.values.append(contentsOf: repeatElement(.integer(7), count: change)) }
        return row
    }

    /// What to do with the next commit, which has `writes` row writes.
    func nextCommit(writes: Int) -> Action {
        state.withLock { state in
            state.commits += 1
            if state.busyCommits > 0 {
                state.busyCommits -= 1
                state.injectedFailures += 1
                return .busy(state.commits)
            }
            if state.failingCommits.remove(state.commits) != nil {
                state.injectedFailures += 1
                return .failBeforeWriting(state.commits)
            }
            guard let n = state.failingWrite else { return .pass }
            state.failingWrite = nil
            guard n <= writes else { return .pass }
            state.injectedFailures += 1
            return .damageWrite(n)
        }
    }

    enum Action {
        case pass
        case failBeforeWriting(Int)
        case busy(Int)
        case damageWrite(Int)
    }
}
