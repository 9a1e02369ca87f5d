import Foundation

/// Workloads 1–6 on one engine, each beside its baseline, on one data set.
///
/// Workload 1 builds a fresh Strata store and a fresh raw store for every run; the stores of the
/// last run then serve workloads 2–6, so every read runs on data written the measured way.
struct EngineBenchmark {
    let engine: EngineChoice
    let dataset: Dataset
    let repetitions: Int
    /// Where this engine's stores live; removed by the caller.
    let scratch: URL
    let progress: @Sendable (String) -> Void

    func run() async throws -> [WorkloadResult] {
        let rawName = "raw \(engine.displayName)"
        let rows = dataset.rowCount
        var serial = 0
        func directory(_ label: String) -> URL {
            serial += 1
            return scratch.appendingPathComponent("\(label)-\(serial)")
        }
        func measured(_ workload: Workload, _ samples: (strata: Samples, baseline: Samples), items: Int) -> WorkloadResult {
            .measured(workload, on: engine, unit: "ns/row", unitScale: 1, baselineName: rawName, items: items,
                      strata: samples.strata, baseline: samples.baseline)
        }
        var results: [WorkloadResult] = []

        step(.insert)
        var strataStore: StrataStore?
        var rawStore: (any RawBaseline)?
        var rawDirectory: URL?
        let inserts = try await measurePair("insert", repetitions: repetitions, strata: {
            if let previous = strataStore?.directory {
                strataStore = nil
                removeScratch(previous)
            }
            let store = try await StrataStore.make(engine, in: directory("strata"), dataset: dataset)
            strataStore = store
            return (try await StrataWorkloads.insert(store, dataset), nil)
        }, baseline: {
            rawStore?.close()
            if let previous = rawDirectory { removeScratch(previous) }
            let next = directory("raw")
            rawDirectory = next
            let raw = try makeRaw(in: next)
            rawStore = raw
            return (try await Clock.time { try raw.insertRows(dataset) }.nanoseconds, nil)
        })
        results.append(measured(.insert, inserts, items: rows))
        guard let store = strataStore, let raw = rawStore else { return results }
        defer { raw.close() }

        step(.fetchAll)
        results.append(measured(.fetchAll, try await measurePair("fetch all", repetitions: repetitions, strata: {
            try await StrataWorkloads.fetchAll(store)
        }, baseline: {
            try await Clock.time { try raw.fetchAll() }
        }), items: rows))

        step(.lookup)
        let keys = dataset.lookupOrder
        let ids = store.rowIDs(keys)
        results.append(measured(.lookup, try await measurePair("lookup", repetitions: repetitions, strata: {
            try await StrataWorkloads.lookup(store, ids)
        }, baseline: {
            try await Clock.time { try raw.lookup(keys) }
        }), items: rows))

        step(.predicate)
        let windows = dataset.windows
        results.append(measured(.predicate, try await measurePair("predicate", repetitions: repetitions, strata: {
            try await StrataWorkloads.predicate(store, windows)
        }, baseline: {
            try await Clock.time { try raw.predicate(windows) }
        }), items: dataset.rowsInWindows))

        step(.toMany)
        results.append(measured(.toMany, try await measurePair("to-many", repetitions: repetitions, strata: {
            try await StrataWorkloads.toMany(store)
        }, baseline: {
            try await Clock.time { try raw.toMany() }
        }), items: rows))

        step(.freshContext)
        let freshIDs = store.rowIDs(dataset.freshContextKeys)
        let contexts = try await measurePair("fresh context", repetitions: repetitions, strata: {
            try await FreshContextWorkload.fresh(store, freshIDs)
        }, baseline: {
            try await FreshContextWorkload.reused(store, freshIDs)
        })
        results.append(.measured(
            .freshContext, on: engine, unit: "µs/op", unitScale: 1_000, baselineName: "reused context",
            items: freshIDs.count, strata: contexts.strata, baseline: contexts.baseline))
        return results
    }

    private func step(_ workload: Workload) {
        progress("\(engine.displayName): \(workload.rawValue). \(workload.title)")
    }

    private func makeRaw(in directory: URL) throws -> any RawBaseline {
        switch engine {
        case .sqlite: try RawSQLite(directory: directory, dataset: dataset)
        case .lmdb: try RawLMDB(directory: directory, dataset: dataset)
        }
    }
}
