import Foundation
import Strata

/// Workloads 15–20 (issue 25) on one engine: each set-based operation beside the raw SQL (or
/// `mdb_*`) job and the same job through the object graph, interleaved, on one data set.
///
/// 15 builds fresh stores every run (Strata with `batchInsert`, Strata through objects, raw);
/// the last run's Strata and raw stores then get their lines (untimed) and serve the rest, in
/// this order: 19 and 20 (reads; then their memory, in child processes), 16, 17, 18 (writes).
/// Each write run is mirrored on the raw store, so both stores hold the same rows throughout:
/// - 16: run `r` upserts the rows of serial `2r` (set-based) and `2r + 1` (objects); raw does
///   both, timing the first;
/// - 17: both Strata ways and both raw runs add 1 to the amounts of the first category;
/// - 18: run `r` deletes category `2r` (set-based) and `2r + 1` (objects); raw deletes both,
///   timing the first. Ten categories allow at most 4 timed runs after the warm-up; each run
///   deletes about a tenth of the entries the store first held, from a store ~20% smaller than
///   the run before.
struct SetBasedBenchmark {
    let engine: EngineChoice
    let data: SetDataset
    /// Timed runs of 15 and 20.
    let repetitions: Int
    /// Timed runs of 16–19 (18: at most 4).
    let shortRepetitions: Int
    let workloads: Set<Workload>
    /// Whether the Strata stores record persistent history (`--history`, default on).
    let recordsHistory: Bool
    let scratch: URL

    /// Every chosen engine, when the options ask for any of 15–20.
    static func run(options: BenchmarkOptions, scratch: URL) async throws -> [WorkloadResult] {
        guard !options.workloads.isDisjoint(with: Workload.setBased) else { return [] }
        progress("generating \(options.setRows) entries for workloads 15–20")
        let data = SetDataset(rows: options.setRows)
        var results: [WorkloadResult] = []
        for engine in options.engines {
            let benchmark = SetBasedBenchmark(
                engine: engine, data: data, repetitions: options.setRepetitions,
                shortRepetitions: options.setShortRepetitions, workloads: options.workloads,
                recordsHistory: options.recordsHistory,
                scratch: scratch.appendingPathComponent("set-\(engine.rawValue)"))
            results += try await benchmark.run()
        }
        return results
    }

    func run() async throws -> [WorkloadResult] {
        var serial = 0
        func directory(_ label: String) -> URL {
            serial += 1
            return scratch.appendingPathComponent("\(label)-\(serial)")
        }
        var results: [WorkloadResult] = []
        var store: SetStore?
        var raw: (any RawSetBaseline)?
        var rawDirectory: URL?
        func newRaw() throws -> any RawSetBaseline {
            raw?.close()
            if let rawDirectory { removeScratch(rawDirectory) }
            let next = directory("raw")
            rawDirectory = next
            let made = try makeRawSet(engine, in: next, create: true)
            raw = made
            return made
        }
        func newStore() throws -> SetStore {
            if let previous = store {
                previous.container.close()
                removeScratch(previous.directory)
            }
            let made = try SetStore(engine, in: directory("strata"), recordsHistory: recordsHistory)
            store = made
            return made
        }

        let data = self.data
        if workloads.contains(.batchInsert) {
            step(.batchInsert)
            let samples = try await measureTriple(
                .batchInsert, repetitions: repetitions,
                batch: { _ in try await SetBasedWorkloads.batchInsert(try newStore(), data) },
                objectGraph: { _ in
                    let place = directory("objects")
                    let scratchStore = try SetStore(engine, in: place, recordsHistory: recordsHistory)
                    defer {
                        scratchStore.container.close()
                        removeScratch(place)
                    }
                    return try await SetBasedWorkloads.objectInsert(scratchStore, data)
                },
                raw: { _ in
                    let fresh = try newRaw()
                    let time = try await Clock.time { try fresh.insertEntries(data) }.nanoseconds
                    return (time, Checksum(count: data.rowCount), nil)
                })
            results += pair(.batchInsert, samples, items: data.rowCount)
        } else {
            progress("\(engine.displayName): filling \(data.rowCount) entries (untimed)")
            _ = try await SetBasedWorkloads.batchInsert(try newStore(), data)
            try newRaw().insertEntries(data)
        }
        guard let store, let raw, let rawDirectory else { return results }
        defer {
            raw.close()
            store.container.close()
        }
        progress("\(engine.displayName): adding \(data.lineCount) lines (untimed)")
        try await SetBasedWorkloads.insertLines(store, data)
        try raw.insertLines(data)

        if workloads.contains(.groupedSum) {
            step(.groupedSum)
            let samples = try await measureTriple(
                .groupedSum, repetitions: shortRepetitions,
                batch: { _ in try await SetBasedWorkloads.groupedSum(store) },
                objectGraph: { _ in try await SetBasedWorkloads.objectGroupedSum(store) },
                raw: { _ in
                    let (time, groups) = try await Clock.time { try raw.sumByCategory() }
                    return (time, Checksum(groups: groups), nil)
                })
            results += pair(.groupedSum, samples, items: data.rowCount)
        }
        if workloads.contains(.streaming) {
            step(.streaming)
            let samples = try await measureTriple(
                .streaming, repetitions: repetitions,
                batch: { _ in try await SetBasedWorkloads.stream(store) },
                objectGraph: { _ in try await SetBasedWorkloads.objectStream(store) },
                raw: { _ in
                    let (time, sum) = try await Clock.time { try raw.streamEntries(sample: {}) }
                    return (time, sum, nil)
                })
            results += pair(.streaming, samples, items: data.rowCount)
        }
        if !workloads.isDisjoint(with: [.groupedSum, .streaming]) {
            results += try SetBasedMemory.run(engine, store: store, rawDirectory: rawDirectory, workloads: workloads)
        }

        if workloads.contains(.upsert) {
            step(.upsert)
            let samples = try await measureTriple(
                .upsert, repetitions: shortRepetitions,
                batch: { round in try await SetBasedWorkloads.batchUpsert(store, data.upsert(serial: 2 * round)) },
                objectGraph: { round in
                    try await SetBasedWorkloads.objectUpsert(store, data.upsert(serial: 2 * round + 1))
                },
                raw: { round in
                    let rows = data.upsert(serial: 2 * round)
                    let (time, written) = try await Clock.time { try raw.upsert(rows) }
                    let mirrored = try raw.upsert(data.upsert(serial: 2 * round + 1))
                    return (time, Checksum(count: written), Checksum(count: mirrored))
                })
            results += pair(.upsert, samples, items: data.upsertCount)
        }
        let first = SetDataset.categories[0]
        if workloads.contains(.batchUpdate) {
            step(.batchUpdate)
            let samples = try await measureTriple(
                .batchUpdate, repetitions: shortRepetitions,
                batch: { _ in try await SetBasedWorkloads.batchUpdate(store, category: first) },
                objectGraph: { _ in try await SetBasedWorkloads.objectUpdate(store, category: first) },
                raw: { _ in
                    let (time, updated) = try await Clock.time { try raw.add(1, toCategory: first) }
                    let mirrored = try raw.add(1, toCategory: first)
                    return (time, Checksum(count: updated), Checksum(count: mirrored))
                })
            results += pair(.batchUpdate, samples, items: data.count(inCategory: 0))
        }
        if workloads.contains(.batchDelete) {
            step(.batchDelete)
            let rounds = min(shortRepetitions, SetDataset.categories.count / 2 - 1)
            if rounds < shortRepetitions {
                progress("\(engine.displayName): 18. \(rounds) timed runs (ten categories, two deleted a run)")
            }
            let category = { (index: Int) in SetDataset.categories[index % SetDataset.categories.count] }
            let samples = try await measureTriple(
                .batchDelete, repetitions: rounds,
                batch: { round in try await SetBasedWorkloads.batchDelete(store, category: category(2 * round)) },
                objectGraph: { round in
                    try await SetBasedWorkloads.objectDelete(store, category: category(2 * round + 1))
                },
                raw: { round in
                    let (time, deleted) = try await Clock.time { try raw.delete(category: category(2 * round)) }
                    let mirrored = try raw.delete(category: category(2 * round + 1))
                    return (time, Checksum(count: deleted), Checksum(count: mirrored))
                })
            // Per entry deleted (its lines go with it): the mean entries of the timed runs' categories.
            let timed = (1...max(rounds, 1)).map { data.count(inCategory: (2 * $0) % SetDataset.categories.count) }
            results += pair(.batchDelete, samples, items: timed.reduce(0, +) / timed.count)
        }
        return results
    }

    /// The set-based result (with the target) and the object-graph one (no target), both
    /// against the raw baseline.
    private func pair(_ workload: Workload, _ samples: TripleSamples, items: Int) -> [WorkloadResult] {
        let rawName = "raw \(engine.displayName)"
        var batch = WorkloadResult.measured(
            workload, on: engine, unit: "ns/row", unitScale: 1, baselineName: rawName, items: items,
            strata: samples.batch, baseline: samples.raw)
        var objects = WorkloadResult.measured(
            workload, on: engine, unit: "ns/row", unitScale: 1, baselineName: rawName, items: items,
            strata: samples.objectGraph, baseline: samples.raw)
        objects.name += " (object graph)"
        objects.target = nil
        objects.targetLimit = nil
        objects.targetMet = nil
        let gain = samples.objectGraph.median / samples.batch.median
        batch.note = """
            the same job through the object graph: \(format(objects.strata ?? .nan, digits: 1)) ns/row, \
            \(format(objects.ratio ?? .nan, digits: 2))× raw; the set-based call is \(format(gain, digits: 1))× faster
            """
        objects.note = "Strata through objects (fetch, change, save); the set-based figure is the line above"
        return [batch, objects]
    }

    private func step(_ workload: Workload) {
        progress("\(engine.displayName): \(workload.rawValue). \(workload.title) (N = \(data.rowCount))")
    }
}

/// The timed samples of a set-based workload's three sides.
struct TripleSamples {
    var batch = Samples()
    var objectGraph = Samples()
    var raw = Samples()
}

/// Runs the three sides of a workload interleaved: one warm-up round, then `repetitions` rounds
/// of (set-based, object graph, raw), each closure given the round's number (0 is the warm-up).
///
/// The raw side returns its time, the checksum the set-based side must match and, when it also
/// mirrors the object-graph side's change on its store, the checksum that side must match
/// (else the first).
func measureTriple(
    _ workload: Workload, repetitions: Int,
    batch: (Int) async throws -> (UInt64, Checksum?),
    objectGraph: (Int) async throws -> (UInt64, Checksum?),
    raw: (Int) async throws -> (UInt64, Checksum, Checksum?)
) async throws -> TripleSamples {
    var samples = TripleSamples()
    for round in 0...repetitions {
        let (batchTime, batchSum) = try await batch(round)
        let (objectTime, objectSum) = try await objectGraph(round)
        let (rawTime, rawSum, mirroredSum) = try await raw(round)
        if let batchSum, batchSum != rawSum {
            throw BenchmarkError.mismatch("\(workload.title): the set-based call did \(batchSum); raw did \(rawSum)")
        }
        if let objectSum, objectSum != (mirroredSum ?? rawSum) {
            throw BenchmarkError.mismatch(
                "\(workload.title): the object graph did \(objectSum); raw did \(mirroredSum ?? rawSum)")
        }
        if round > 0 {
            samples.batch.nanoseconds.append(batchTime)
            samples.objectGraph.nanoseconds.append(objectTime)
            samples.raw.nanoseconds.append(rawTime)
        }
    }
    return samples
}

extension SetDataset {
    /// The entries of the category with this index.
    func count(inCategory index: Int) -> Int {
        categoryIndexes.reduce(0) { $0 + ($1 == UInt8(index) ? 1 : 0) }
    }
}
