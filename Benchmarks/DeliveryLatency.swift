import Foundation
import Strata
import StrataTestSupport

/// Workloads 11 and 12: the delay from a commit to its delivery to an observer iterating
/// `container.changes()`.
///
/// **Definition.** A commit's latency is the time from the moment its `save()` returns in the
/// committing process (`clock_gettime(CLOCK_MONOTONIC)` right after the call) to the moment
/// the observer's `for try await` loop has the transaction (the same clock, first thing in the
/// loop body). `CLOCK_MONOTONIC` is one clock for every process on a machine, so the two
/// readings compare across processes. A delivery that happens before `save()` has returned
/// (the observer runs on another thread and may win) counts as 0 and is counted apart. Beside
/// it, the note of each result gives p50 and p99 from the moment `save()` was called, which
/// include the commit itself.
///
/// Each commit inserts one `BenchRow` and names itself in its transaction: the author is
/// `"bench-writer <n>"`, so the observer matches transactions to commits by the transaction
/// itself, not by arrival order. Commits are paced by a pause of 2–8 ms (seeded random, so the
/// commits do not fall into step with the 5 ms polling of other processes' commits); a fresh
/// store per engine and measurement.
enum DeliveryLatency {
    /// The author of commit `index`.
    static func author(_ index: Int) -> String { "bench-writer \(index)" }

    /// The commit index named by `author`, if it is one of ours.
    static func index(of author: String?) -> Int? {
        guard let author, author.hasPrefix("bench-writer ") else { return nil }
        return Int(author.dropFirst("bench-writer ".count))
    }

    /// The pause before commit `index` (2–8 ms, from a fixed seed).
    static func pauses(_ commits: Int) -> [Duration] {
        var random = SeededGenerator(seed: 15)
        return (0..<commits).map { _ in .microseconds(Int64.random(in: 2_000..<8_000, using: &random)) }
    }

    /// Workload 11: one container; a context commits, an observer task in the same process
    /// iterates `changes()`.
    static func inProcess(
        _ engine: EngineChoice, dataset: Dataset, commits: Int, scratch: URL
    ) async throws -> LatencySummary {
        let directory = scratch.appendingPathComponent("delivery-in-process")
        defer { removeScratch(directory) }
        let store = try await StrataStore.make(engine, in: directory, dataset: dataset)
        let observer = try await Observer.start(store.container, commits: commits)
        var saves: [SaveTimes] = []
        for (index, pause) in pauses(commits).enumerated() {
            try await Task.sleep(for: pause)
            saves.append(try await commit(index, in: store.container))
        }
        return try await LatencySummary(saves: saves, delivered: observer.finish())
    }

    /// Workload 12: the store made here and observed here; a copy of this executable
    /// (`strata-bench --history-writer`, ``HistoryWriter``) opens it and commits. Its save
    /// times come back on its standard output.
    static func crossProcess(
        _ engine: EngineChoice, dataset: Dataset, commits: Int, scratch: URL
    ) async throws -> LatencySummary {
        let directory = scratch.appendingPathComponent("delivery-cross-process")
        defer { removeScratch(directory) }
        let store = try await StrataStore.make(engine, in: directory, dataset: dataset)
        let observer = try await Observer.start(store.container, commits: commits)
        let saves = try await HistoryWriter.spawn(engine, directory: directory, commits: commits)
        return try await LatencySummary(saves: saves, delivered: observer.finish())
    }

    /// Commit `index`: one inserted row, the author naming the commit. Returns the monotonic
    /// times at which `save()` was called and returned.
    static func commit(_ index: Int, in container: PersistentContainer) async throws -> SaveTimes {
        let context = container.newBackgroundContext()
        context.transactionAuthor = author(index)
        return try await context.perform {
            let row = BenchRow(context: context)
            row.amount = Int64(index)
            row.memo = "commit \(index)"
            let called = monotonicNanoseconds()
            try context.save()
            return SaveTimes(called: called, returned: monotonicNanoseconds())
        }
    }
}

/// When one commit's `save()` was called and when it returned, in ``monotonicNanoseconds()``.
struct SaveTimes {
    var called: UInt64
    var returned: UInt64
}

/// `clock_gettime(CLOCK_MONOTONIC)` in nanoseconds, whatever `--clock` says: the same clock in
/// every process on the machine.
func monotonicNanoseconds() -> UInt64 {
    var spec = timespec()
    clock_gettime(CLOCK_MONOTONIC, &spec)
    return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
}

/// An observer task iterating `container.changes()` from the store's current token, noting
/// when each of the expected commits arrives.
struct Observer {
    let task: Task<[UInt64], any Error>
    let commits: Int

    /// Starts observing, and returns once the observer waits for its first transaction.
    static func start(_ container: PersistentContainer, commits: Int) async throws -> Observer {
        let changes = container.changes()
        let task = Task<[UInt64], any Error> {
            var delivered = [UInt64](repeating: 0, count: commits)
            var seen = 0
            for try await transaction in changes {
                let now = monotonicNanoseconds()
                guard let index = DeliveryLatency.index(of: transaction.author), index < commits else {
                    throw BenchmarkError.mismatch("an unexpected transaction by \(transaction.author ?? "nobody")")
                }
                guard delivered[index] == 0 else { throw BenchmarkError.mismatch("commit \(index) delivered twice") }
                delivered[index] = now
                seen += 1
                if seen == commits { return delivered }
            }
            throw BenchmarkError.mismatch("the observer stopped after \(seen) of \(commits) commits")
        }
        // Let the task reach its first wait before the first commit.
        try await Task.sleep(for: .milliseconds(50))
        return Observer(task: task, commits: commits)
    }

    /// The delivery times, once every commit has arrived; fails after 30 s without them.
    func finish() async throws -> [UInt64] {
        let task = task
        return try await withThrowingTaskGroup(of: [UInt64]?.self) { group in
            group.addTask { try await task.value }
            group.addTask {
                try await Task.sleep(for: .seconds(30))
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let delivered = first else {
                task.cancel()
                throw BenchmarkError.mismatch("the observer did not receive all \(commits) commits within 30 s")
            }
            return delivered
        }
    }
}

/// The latencies of one measurement, in nanoseconds, commit by commit.
struct LatencySummary {
    /// Latency per commit; 0 for a delivery before `save()` returned.
    let latencies: [UInt64]
    /// Deliveries that happened before `save()` returned.
    let early: Int
    /// Latency per commit from the moment `save()` was called.
    let fromCall: [UInt64]

    init(saves: [SaveTimes], delivered: [UInt64]) throws {
        guard saves.count == delivered.count else {
            throw BenchmarkError.mismatch("\(saves.count) save times for \(delivered.count) deliveries")
        }
        latencies = zip(saves, delivered).map { $1 > $0.returned ? $1 - $0.returned : 0 }
        early = zip(saves, delivered).filter { $1 <= $0.returned }.count
        fromCall = zip(saves, delivered).map { $1 > $0.called ? $1 - $0.called : 0 }
    }

    /// The nearest-rank percentile `p` (0–100) of `values` (the latencies), in nanoseconds.
    func percentile(_ p: Double, of values: [UInt64]? = nil) -> Double {
        let sorted = (values ?? latencies).sorted()
        guard !sorted.isEmpty else { return .nan }
        let rank = Int((p / 100 * Double(sorted.count)).rounded(.up))
        return Double(sorted[min(max(rank, 1), sorted.count) - 1])
    }

    /// Two report lines, p50 (with the target) and p99, in milliseconds; every latency is kept
    /// in the p50 line's samples.
    func results(_ workload: Workload, on engine: EngineChoice, targetMilliseconds: Double) -> [WorkloadResult] {
        let p50 = percentile(50) / 1e6
        let p99 = percentile(99) / 1e6
        let note = """
            \(early) of \(latencies.count) delivered before save() returned (counted as 0); from save() called: \
            p50 \(format(percentile(50, of: fromCall) / 1e6, digits: 2)) ms, \
            p99 \(format(percentile(99, of: fromCall) / 1e6, digits: 2)) ms
            """
        progress("  \(engine.displayName): p50 \(format(p50, digits: 2)) ms, p99 \(format(p99, digits: 2)) ms; \(note)")
        func line(_ label: String, _ value: Double, target: Bool, samples: Samples?) -> WorkloadResult {
            WorkloadResult(
                workload: workload, name: "\(workload.title), \(label)", engine: engine, unit: "ms",
                baselineName: nil, strata: value, baseline: nil, ratio: nil, difference: nil,
                itemsPerRun: latencies.count,
                target: target ? "p50 < \(format(targetMilliseconds, digits: 0)) ms" : nil,
                targetLimit: target ? targetMilliseconds : nil, targetMet: target ? value < targetMilliseconds : nil,
                status: "measured", strataSamples: samples, baselineSamples: nil, note: note)
        }
        return [
            line("p50", p50, target: true, samples: Samples(nanoseconds: latencies)),
            line("p99", p99, target: false, samples: nil),
        ]
    }
}
