import Foundation
import Strata
import StrataTestSupport

/// The memory figures of workloads 19 and 20 (issue 25): the grouped sum (memory at most the
/// raw query's + 10 MB) and the stream (peak resident set at most 50 MB), each measured in a
/// child process of its own per side, as workload 14 does (``PeakMemory``): a process's peak
/// only grows, so in the parent the earlier workloads' peak would hide these.
///
/// Every phase runs in a fresh child process (`strata-bench --set-memory ENGINE SIDE PHASE
/// DIRECTORY SCHEMA`), so that no phase finds the store's pages or the heap of another already
/// there: Strata's grouped sum, its stream in batches of 1,000 and the same sum over one fetch of
/// every object (the object-graph way); the raw query's grouped sum and its stream. The child
/// opens the store the parent filled (its directory; on PostgreSQL its schema, the server's URL
/// in `STRATA_POSTGRES_URL`), reads one row to warm the connection (Strata) or opens it (raw),
/// then measures the phase with ``MemorySampler`` and prints one ``Output`` as JSON.
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

    /// What one child prints.
    struct Output: Codable, Sendable {
        var phase: MemorySampler.Phase
        var checksum: String
    }

    /// The phases a child can measure.
    enum Phase: String, CaseIterable {
        case groupedSum = "sum"
        case stream
        case objectGraph = "objects"
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
        let strataSum = try child(engine, "strata", .groupedSum, store.directory)
        let strataStream = try child(engine, "strata", .stream, store.directory)
        let objects = try child(engine, "strata", .objectGraph, store.directory)
        let rawSum = try child(engine, "raw", .groupedSum, rawDirectory)
        let rawStream = try child(engine, "raw", .stream, rawDirectory)
        guard objects.checksum == strataSum.checksum else {
            throw BenchmarkError.mismatch(
                "grouped sum: aggregate \(strataSum.checksum), over objects \(objects.checksum)")
        }
        let strata = Side(
            groupedSum: strataSum.phase, stream: strataStream.phase, objectGraph: objects.phase,
            groupedSumChecksum: strataSum.checksum, streamChecksum: strataStream.checksum)
        let raw = Side(
            groupedSum: rawSum.phase, stream: rawStream.phase, objectGraph: nil, groupedSumChecksum: rawSum.checksum,
            streamChecksum: rawStream.checksum)
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

    private static func child(
        _ engine: EngineChoice, _ side: String, _ phase: Phase, _ directory: URL
    ) throws -> Output {
        let process = SpawnedProcess()
        process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        let schema = engine == .postgres ? BenchmarkPostgres.schema(for: directory) : "-"
        process.arguments = [flag, engine.rawValue, side, phase.rawValue, directory.path, schema]
        var environment = ProcessInfo.processInfo.environment
        if let url = BenchmarkPostgres.url { environment[BenchmarkPostgres.variable] = url }
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0, let line = data.split(separator: UInt8(ascii: "\n")).last,
            let measured = try? JSONDecoder().decode(Output.self, from: Data(line))
        else {
            throw BenchmarkError.raw(
                "\(flag) \(engine.rawValue) \(side) \(phase.rawValue) exited with \(process.terminationStatus): "
                    + String(decoding: data, as: UTF8.self))
        }
        return measured
    }

    // MARK: The child

    /// The child mode: `--set-memory ENGINE strata|raw sum|stream|objects DIRECTORY SCHEMA`;
    /// prints one ``Output``.
    static func main(_ arguments: [String]) async throws {
        guard arguments.count == 5, let engine = EngineChoice(rawValue: arguments[0]),
            arguments[1] == "strata" || arguments[1] == "raw", let phase = Phase(rawValue: arguments[2]),
            arguments[1] == "strata" || phase != .objectGraph
        else {
            throw BenchmarkError.usage(
                "\(flag) takes an engine, strata or raw, sum, stream or objects (strata), a directory and a schema")
        }
        BenchmarkPostgres.url = ProcessInfo.processInfo.environment[BenchmarkPostgres.variable]
        let directory = URL(fileURLWithPath: arguments[3])
        let schema = arguments[4] == "-" ? nil : arguments[4]
        let output =
            arguments[1] == "strata"
            ? try await strata(engine, phase, directory, schema) : try await raw(engine, phase, directory, schema)
        print(String(decoding: try JSONEncoder().encode(output), as: UTF8.self))
    }

    private static func strata(
        _ engine: EngineChoice, _ phase: Phase, _ directory: URL, _ schema: String?
    ) async throws -> Output {
        let store = try SetStore(engine, in: directory, schema: schema)
        defer { store.container.close() }
        func inFreshContext<T: Sendable>(_ body: @escaping @Sendable (ObjectContext) throws -> T) async throws -> T {
            let context = store.container.newBackgroundContext()
            return try await context.perform { try body(context) }
        }
        _ = try await inFreshContext { context in try context.fetch(FetchRequest<BenchEntry>(fetchLimit: 1)).count }
        let (measured, sum) = try await MemorySampler.measure {
            try await inFreshContext { context in
                switch phase {
                case .groupedSum: try SetBasedWorkloads.groupedSum(in: context)
                case .stream: try SetBasedWorkloads.stream(in: context, sample: {})
                case .objectGraph: try SetBasedWorkloads.objectGroupedSum(in: context)
                }
            }
        }
        return Output(phase: measured, checksum: sum.description)
    }

    private static func raw(
        _ engine: EngineChoice, _ phase: Phase, _ directory: URL, _ schema: String?
    ) async throws -> Output {
        let raw = try makeRawSet(engine, in: directory, create: false, schema: schema)
        defer { raw.close() }
        let (measured, sum) = try await MemorySampler.measure {
            phase == .stream ? try raw.streamEntries(sample: {}) : Checksum(groups: try raw.sumByCategory())
        }
        return Output(phase: measured, checksum: sum.description)
    }
}
