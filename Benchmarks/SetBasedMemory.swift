import Foundation
import Strata

/// The memory figures of workloads 19 and 20 (issue 25): the grouped sum (memory at most the
/// raw query's + 10 MB) and the stream (peak resident set at most 50 MB), each measured in a
/// child process of its own per side, as workload 14 does (``PeakMemory``): a process's peak
/// only grows, so in the parent the earlier workloads' peak would hide these.
///
/// The child (`strata-bench --set-memory ENGINE strata|raw DIRECTORY SCHEMA`) opens the store the
/// parent filled (its directory; on PostgreSQL its schema, the server's URL in
/// `STRATA_POSTGRES_URL`), reads one row to warm the connection, then measures each phase with
/// ``MemorySampler``: the grouped sum, the stream in batches of 1,000 and (Strata only) the same
/// sum over one fetch of every object, the object-graph way. It prints one ``Side`` as JSON.
enum SetBasedMemory {
    static let flag = "--set-memory"

    struct Side: Codable, Sendable {
        var groupedSum: MemorySampler.Phase
        var stream: MemorySampler.Phase
        /// Strata only: the grouped sum over fetched objects.
        var objectGraph: MemorySampler.Phase?
        var groupedSumChecksum: String
        var streamChecksum: String
    }

    /// Both sides' figures of one engine, for the JSON output.
    struct Figures: Codable, Sendable {
        var strata: Side
        var raw: Side
    }

    // MARK: The parent

    static func run(
        _ engine: EngineChoice, store: SetStore, rawDirectory: URL, workloads: Set<Workload>
    ) throws -> [WorkloadResult] {
        progress("\(engine.displayName): 19–20. peak memory, one child process per side")
        let strata = try child(engine, "strata", store.directory)
        let raw = try child(engine, "raw", rawDirectory)
        guard strata.groupedSumChecksum == raw.groupedSumChecksum, strata.streamChecksum == raw.streamChecksum else {
            throw BenchmarkError.mismatch(
                "set-based memory: Strata read \(strata.groupedSumChecksum) / \(strata.streamChecksum); raw read "
                    + "\(raw.groupedSumChecksum) / \(raw.streamChecksum)")
        }
        let figures = Figures(strata: strata, raw: raw)
        var results: [WorkloadResult] = []
        let rawName = "raw \(engine.displayName)"
        func mb(_ bytes: Int) -> Double { Double(bytes) / 1_048_576 }
        func text(_ bytes: Int) -> String { format(mb(bytes), digits: 1) + " MB" }
        let objectGraph = strata.objectGraph
        if workloads.contains(.groupedSum) {
            let strataGrowth = mb(strata.groupedSum.growth)
            let rawGrowth = mb(raw.groupedSum.growth)
            var result = WorkloadResult(
                workload: .groupedSum, name: "\(Workload.groupedSum.title): memory growth", engine: engine,
                unit: "MB", baselineName: rawName, strata: strataGrowth, baseline: rawGrowth,
                ratio: rawGrowth > 0 ? strataGrowth / rawGrowth : nil, difference: strataGrowth - rawGrowth,
                itemsPerRun: nil, target: Target.extraMegabytes(10).label, targetLimit: 10,
                targetMet: strataGrowth - rawGrowth <= 10, status: "measured",
                note: """
                    peak resident growth less store-file pages mapped: Strata \(text(strata.groupedSum.growth)), \
                    raw \(text(raw.groupedSum.growth)); VmHWM growth (file pages included): Strata \
                    \(text(strata.groupedSum.peakWithFilePages - strata.groupedSum.rssBefore)), raw \
                    \(text(raw.groupedSum.peakWithFilePages - raw.groupedSum.rssBefore)); the same sum over one \
                    fetch of every object: \(objectGraph.map { text($0.growth) } ?? "—")
                    """)
            result.setMemory = figures
            results.append(result)
        }
        if workloads.contains(.streaming) {
            let strataPeak = mb(strata.stream.peakResident)
            let rawPeak = mb(raw.stream.peakResident)
            var result = WorkloadResult(
                workload: .streaming, name: "\(Workload.streaming.title): peak RSS", engine: engine, unit: "MB",
                baselineName: rawName, strata: strataPeak, baseline: rawPeak,
                ratio: rawPeak > 0 ? strataPeak / rawPeak : nil, difference: strataPeak - rawPeak, itemsPerRun: nil,
                target: Target.peakMegabytes(50).label, targetLimit: 50, targetMet: strataPeak <= 50,
                status: "measured",
                note: """
                    peak RSS less store-file pages mapped by the stream: Strata \(text(strata.stream.peakResident)) \
                    (growth \(text(strata.stream.growth))), raw \(text(raw.stream.peakResident)) (growth \
                    \(text(raw.stream.growth))); VmHWM with file pages: Strata \
                    \(text(strata.stream.peakWithFilePages)), raw \(text(raw.stream.peakWithFilePages)); file \
                    pages mapped: Strata \(text(strata.stream.fileGrowth)), raw \(text(raw.stream.fileGrowth)); \
                    one fetch of every object instead: peak \(objectGraph.map { text($0.peakResident) } ?? "—")
                    """)
            result.setMemory = figures
            results.append(result)
        }
        return results
    }

    private static func child(_ engine: EngineChoice, _ side: String, _ directory: URL) throws -> Side {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        let schema = engine == .postgres ? BenchmarkPostgres.schema(for: directory) : "-"
        process.arguments = [flag, engine.rawValue, side, directory.path, schema]
        var environment = ProcessInfo.processInfo.environment
        if let url = BenchmarkPostgres.url { environment[BenchmarkPostgres.variable] = url }
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0, let line = data.split(separator: UInt8(ascii: "\n")).last,
            let measured = try? JSONDecoder().decode(Side.self, from: Data(line))
        else {
            throw BenchmarkError.raw(
                "\(flag) \(engine.rawValue) \(side) exited with \(process.terminationStatus): "
                    + String(decoding: data, as: UTF8.self))
        }
        return measured
    }

    // MARK: The child

    /// The child mode: `--set-memory ENGINE strata|raw DIRECTORY SCHEMA`; prints one ``Side``.
    static func main(_ arguments: [String]) async throws {
        guard arguments.count == 4, let engine = EngineChoice(rawValue: arguments[0]),
            arguments[1] == "strata" || arguments[1] == "raw"
        else { throw BenchmarkError.usage("\(flag) takes an engine, strata or raw, a directory and a schema") }
        BenchmarkPostgres.url = ProcessInfo.processInfo.environment[BenchmarkPostgres.variable]
        let directory = URL(fileURLWithPath: arguments[2])
        let schema = arguments[3] == "-" ? nil : arguments[3]
        let side =
            arguments[1] == "strata"
            ? try await strata(engine, directory, schema) : try await raw(engine, directory, schema)
        print(String(decoding: try JSONEncoder().encode(side), as: UTF8.self))
    }

    private static func strata(_ engine: EngineChoice, _ directory: URL, _ schema: String?) async throws -> Side {
        let store = try SetStore(engine, in: directory, schema: schema)
        defer { store.container.close() }
        func inFreshContext<T: Sendable>(_ body: @escaping @Sendable (ObjectContext) throws -> T) async throws -> T {
            let context = store.container.newBackgroundContext()
            return try await context.perform { try body(context) }
        }
        _ = try await inFreshContext { context in try context.fetch(FetchRequest<BenchEntry>(fetchLimit: 1)).count }
        let (sumPhase, sum) = try await MemorySampler.measure {
            try await inFreshContext { context in try SetBasedWorkloads.groupedSum(in: context) }
        }
        let (streamPhase, streamed) = try await MemorySampler.measure {
            try await inFreshContext { context in try SetBasedWorkloads.stream(in: context, sample: {}) }
        }
        let (objectPhase, objectSum) = try await MemorySampler.measure {
            try await inFreshContext { context in try SetBasedWorkloads.objectGroupedSum(in: context) }
        }
        guard objectSum == sum else {
            throw BenchmarkError.mismatch("grouped sum: aggregate \(sum), over objects \(objectSum)")
        }
        return Side(
            groupedSum: sumPhase, stream: streamPhase, objectGraph: objectPhase, groupedSumChecksum: sum.description,
            streamChecksum: streamed.description)
    }

    private static func raw(_ engine: EngineChoice, _ directory: URL, _ schema: String?) async throws -> Side {
        let raw = try makeRawSet(engine, in: directory, create: false, schema: schema)
        defer { raw.close() }
        let (sumPhase, groups) = try await MemorySampler.measure { try raw.sumByCategory() }
        let (streamPhase, streamed) = try await MemorySampler.measure { try raw.streamEntries(sample: {}) }
        return Side(
            groupedSum: sumPhase, stream: streamPhase, objectGraph: nil,
            groupedSumChecksum: Checksum(groups: groups).description, streamChecksum: streamed.description)
    }
}
