import Foundation
import Strata

/// Workloads 10–12 (issue 15): what persistent history costs a save, and how soon an observer
/// hears of a commit.
///
/// 10. Insert N with history on and off: workload 1's insert into a fresh store whose container
///     records history (`recordsHistory: true`, the default), against the same insert into one
///     that does not. Strata column: history on; Baseline column: history off; Ratio: the
///     overhead. Interleaved runs, medians, like workloads 1–5.
/// 11. Commit → delivery in one process: see ``DeliveryLatency/inProcess(_:dataset:commits:scratch:)``.
/// 12. Commit → delivery from another process: see ``DeliveryLatency/crossProcess(_:dataset:commits:scratch:)``.
enum HistoryWorkloads {
    static func run(options: BenchmarkOptions, dataset: Dataset, scratch: URL) async throws -> [WorkloadResult] {
        var results: [WorkloadResult] = []
        for engine in options.engines {
            let directory = scratch.appendingPathComponent("history-\(engine.rawValue)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            if options.workloads.contains(.historyInsert) {
                progress("\(engine.displayName): 10. \(Workload.historyInsert.title)")
                results.append(
                    try await insertBothWays(engine, dataset: dataset, repetitions: options.repetitions, in: directory))
            }
            if options.workloads.contains(.deliveryInProcess) {
                progress("\(engine.displayName): 11. \(Workload.deliveryInProcess.title), \(options.commits) commits")
                let latencies = try await DeliveryLatency.inProcess(
                    engine, dataset: dataset, commits: options.commits, scratch: directory)
                results += latencies.results(.deliveryInProcess, on: engine, targetMilliseconds: 1)
            }
            if options.workloads.contains(.deliveryCrossProcess) && !engine.runsChildProcesses {
                progress("\(engine.displayName): 12. not run: its writer process would need the run's server")
            } else if options.workloads.contains(.deliveryCrossProcess) {
                progress(
                    "\(engine.displayName): 12. \(Workload.deliveryCrossProcess.title), \(options.commits) commits")
                let latencies = try await DeliveryLatency.crossProcess(
                    engine, dataset: dataset, commits: options.commits, scratch: directory)
                results += latencies.results(.deliveryCrossProcess, on: engine, targetMilliseconds: 20)
            }
        }
        return results
    }

    /// Workload 10: fresh stores, history on (Strata column) and off (Baseline column), interleaved.
    static func insertBothWays(
        _ engine: EngineChoice, dataset: Dataset, repetitions: Int, in directory: URL
    ) async throws -> WorkloadResult {
        var serial = 0
        func insert(recordsHistory: Bool) async throws -> (UInt64, Checksum?) {
            serial += 1
            let place = directory.appendingPathComponent("insert-\(recordsHistory ? "on" : "off")-\(serial)")
            defer { removeScratch(place) }
            let store = try await StrataStore.make(engine, in: place, dataset: dataset, recordsHistory: recordsHistory)
            let nanoseconds = try await StrataWorkloads.insert(store, dataset)
            try await checkHistory(store, recordsHistory: recordsHistory, rows: dataset.rowCount)
            return (nanoseconds, nil)
        }
        let samples = try await measurePair(
            "insert with and without history", repetitions: repetitions,
            strata: { try await insert(recordsHistory: true) }, baseline: { try await insert(recordsHistory: false) })
        return .measured(
            .historyInsert, on: engine, unit: "ns/row", unitScale: 1, baselineName: "history off",
            items: dataset.rowCount, strata: samples.strata, baseline: samples.baseline)
    }

    /// Checks (untimed) that the insert recorded one history transaction of every row, or none.
    private static func checkHistory(_ store: StrataStore, recordsHistory: Bool, rows: Int) async throws {
        guard recordsHistory else {
            if store.container.recordsHistory {
                throw BenchmarkError.mismatch("history is on in the history-off store")
            }
            return
        }
        // The accounts' save, then the insert's: an insert of every row, and an update of each
        // account whose to-many `rows` gained one.
        let transactions = try await store.container.history()
        let changes = transactions.last?.changes ?? []
        let inserted = changes.filter { $0.kind == .insert }.count
        let updated = changes.filter { $0.kind == .update && $0.changedProperties == ["rows"] }.count
        let accounts = min(rows, Dataset.accountCount)
        guard transactions.count == 2, inserted == rows, updated == accounts, changes.count == rows + accounts else {
            throw BenchmarkError.mismatch(
                "history on: expected 2 transactions, the last inserting \(rows) rows and updating \(accounts) "
                    + "accounts; found \(transactions.count), the last with \(inserted) inserts and \(updated) "
                    + "updates of \(changes.count) changes")
        }
    }
}
