import Foundation
import Strata

/// Workloads 1–6 and 9 on one engine, each beside its baseline, on one data set.
///
/// Workload 1 builds a fresh Strata store and a fresh raw store for every run; the stores of the
/// last run then serve workloads 2–6, so every read runs on data written the measured way.
struct EngineBenchmark {
    let engine: EngineChoice
    let dataset: Dataset
    let repetitions: Int
    let workloads: Set<Workload>
    /// Whether the Strata stores record persistent history.
    let recordsHistory: Bool
    /// Where this engine's stores live; removed by the caller.
    let scratch: URL
    let progress: @Sendable (String) -> Void

    /// The workloads this type measures.
    static let covered: Set<Workload> = [
        .insert, .fetchAll, .lookup, .predicate, .toMany, .toManyPrefetched, .freshContext, .migration,
    ]

    func run() async throws -> [WorkloadResult] {
        let rawName = "raw \(engine.displayName)"
        let rows = dataset.rowCount
        var serial = 0
        func directory(_ label: String) -> URL {
            serial += 1
            return scratch.appendingPathComponent("\(label)-\(serial)")
        }
        func measured(
            _ workload: Workload, _ samples: (strata: Samples, baseline: Samples), items: Int
        ) -> WorkloadResult {
            .measured(
                workload, on: engine, unit: "ns/row", unitScale: 1, baselineName: rawName, items: items,
                strata: samples.strata, baseline: samples.baseline)
        }
        var results: [WorkloadResult] = []

        step(.insert)
        // Without workload 1, the stores are filled once, untimed.
        let insertRepetitions = workloads.contains(.insert) ? repetitions : 0
        var strataStore: StrataStore?
        var rawStore: (any RawBaseline)?
        var rawDirectory: URL?
        let inserts = try await measurePair(
            "insert", repetitions: insertRepetitions,
            strata: {
                if let previous = strataStore {
                    previous.container.close()
                    strataStore = nil
                    removeScratch(previous.directory)
                }
                let store = try await StrataStore.make(
                    engine, in: directory("strata"), dataset: dataset, recordsHistory: recordsHistory)
                strataStore = store
                return (try await StrataWorkloads.insert(store, dataset), nil)
            },
            baseline: {
                rawStore?.close()
                if let previous = rawDirectory { removeScratch(previous) }
                let next = directory("raw")
                rawDirectory = next
                let raw = try makeRaw(in: next)
                rawStore = raw
                return (try await Clock.time { try raw.insertRows(dataset) }.nanoseconds, nil)
            })
        if workloads.contains(.insert) { results.append(measured(.insert, inserts, items: rows)) }
        guard let store = strataStore, let raw = rawStore else { return results }
        defer {
            raw.close()
            store.container.close()
        }

        func compare(
            _ workload: Workload, items: Int, strata: () async throws -> (UInt64, Checksum?), raw: () throws -> Checksum
        ) async throws {
            guard workloads.contains(workload) else { return }
            step(workload)
            let samples = try await measurePair(
                workload.title, repetitions: repetitions, strata: strata,
                baseline: {
                    try await Clock.time { try raw() }
                })
            results.append(measured(workload, samples, items: items))
        }
        try await compare(
            .fetchAll, items: rows, strata: { try await StrataWorkloads.fetchAll(store) }, raw: raw.fetchAll)
        let keys = dataset.lookupOrder
        let ids = store.rowIDs(keys)
        try await compare(
            .lookup, items: rows, strata: { try await StrataWorkloads.lookup(store, ids) },
            raw: { try raw.lookup(keys) })
        let windows = dataset.windows
        try await compare(
            .predicate, items: dataset.rowsInWindows, strata: { try await StrataWorkloads.predicate(store, windows) },
            raw: { try raw.predicate(windows) })
        try await compare(.toMany, items: rows, strata: { try await StrataWorkloads.toMany(store) }, raw: raw.toMany)
        try await compare(
            .toManyPrefetched, items: rows, strata: { try await StrataWorkloads.toManyPrefetched(store) },
            raw: raw.toMany)

        if workloads.contains(.freshContext) {
            step(.freshContext)
            let freshIDs = store.rowIDs(dataset.freshContextKeys)
            // One call measures both variants, interleaved; the baseline side reports the reused half.
            var reusedHalf: (UInt64, Checksum?) = (0, nil)
            let contexts = try await measurePair(
                "fresh context", repetitions: repetitions,
                strata: {
                    let run = try await FreshContextWorkload.run(store, freshIDs)
                    reusedHalf = (run.reused.0, run.reused.1)
                    return (run.fresh.0, run.fresh.1)
                },
                baseline: {
                    reusedHalf
                })
            results.append(
                .measured(
                    .freshContext, on: engine, unit: "µs/op", unitScale: 1_000, baselineName: "reused context",
                    items: freshIDs.count, strata: contexts.strata, baseline: contexts.baseline))
        }
        if workloads.contains(.migration) {
            step(.migration)
            results.append(
                try await MigrationWorkload.run(
                    engine: engine, dataset: dataset, repetitions: repetitions, scratch: scratch,
                    makeRaw: { [self] directory in try makeRaw(in: directory) }))
        }
        return results
    }

    private func step(_ workload: Workload) {
        progress("\(engine.displayName): \(workload.rawValue). \(workload.title)")
    }

    private func makeRaw(in directory: URL) throws -> any RawBaseline {
        switch engine {
        case .sqlite: try RawSQLite(directory: directory, dataset: dataset)
        case .lmdb: try RawLMDB(directory: directory, dataset: dataset)
        case .postgres: try RawPostgres(directory: directory, dataset: dataset)
        }
    }
}
