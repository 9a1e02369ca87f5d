import Foundation
import Strata
import StrataTestSupport

/// 14. The memory of fetching all N rows and holding them, Strata against the raw baseline.
///
/// Each side runs in a child process of its own (`strata-bench --peak-memory ENGINE SIDE ROWS`,
/// started by the parent as workload 12 starts its writer), since a process's peak and its
/// heap only ever grow: in one process the earlier workloads' peak would hide this one. The
/// child makes a store of N rows (untimed; Strata: workload 1's save, raw: its insert), gives
/// the freed heap back (`malloc_trim(0)`), resets the peak resident set (`/proc/self/clear_refs`
/// ← `5`) and reads `/proc/self/status`; then it fetches every row and reads every attribute
/// (as workload 2 does) while holding them all (Strata: the fetched objects in one context;
/// raw: the baseline's array of rows), reads the status again, lets go and reads the peak.
///
/// Per side it reports the growth of anonymous memory while holding the rows (`RssAnon`), of
/// the peak resident set (`VmHWM` − `VmRSS` before) and of mapped file pages (`RssFile`). The
/// compared figure, in bytes per row, is the **anonymous growth**: it is the memory the objects
/// (or the rows) take. The peak includes the pages of the store's file a fetch maps (LMDB's
/// map, SQLite's page cache is anonymous), the same on both sides, which would flatter the LMDB
/// ratio; it is reported beside it.
enum PeakMemory {
    static let flag = "--peak-memory"

    /// What one child measured, in bytes (one JSON line on its standard output).
    struct Side: Codable, Sendable {
        var rows: Int
        var rssBefore: Int
        /// `VmHWM` after the fetch minus `VmRSS` before it.
        var peakGrowth: Int
        /// `RssAnon` while holding every row, minus before.
        var anonymousGrowth: Int
        /// `RssFile` while holding every row, minus before.
        var fileGrowth: Int
        /// The rows read, for comparing the two sides.
        var checksum: String
    }

    /// Workload 14's figures for one engine, for the JSON output.
    struct Figures: Codable, Sendable {
        var strata: Side
        var raw: Side
    }

    // MARK: The parent

    /// Runs both sides on every chosen engine, one child process each, when the options ask
    /// for workload 14.
    static func run(options: BenchmarkOptions) throws -> [WorkloadResult] {
        guard options.workloads.contains(.peakMemory) else { return [] }
        var results: [WorkloadResult] = []
        for engine in options.engines {
            guard engine.runsChildProcesses else {
                progress("\(engine.displayName): 14. not run: its child processes would need the run's server")
                continue
            }
            progress("\(engine.displayName): 14. \(Workload.peakMemory.title), one child process per side")
            let strata = try child(engine, "strata", rows: options.rows)
            let raw = try child(engine, "raw", rows: options.rows)
            guard strata.checksum == raw.checksum else {
                throw BenchmarkError.mismatch("peak memory: Strata read \(strata.checksum); raw read \(raw.checksum)")
            }
            results.append(result(engine, strata: strata, raw: raw))
        }
        return results
    }

    static func result(_ engine: EngineChoice, strata: Side, raw: Side) -> WorkloadResult {
        let rows = Double(strata.rows)
        let strataPerRow = Double(strata.anonymousGrowth) / rows
        let rawPerRow = Double(raw.anonymousGrowth) / rows
        let ratio = rawPerRow > 0 ? strataPerRow / rawPerRow : nil
        let target = Workload.peakMemory.target(on: engine)
        func megabytes(_ bytes: Int) -> String { format(Double(bytes) / 1_048_576, digits: 0) + " MB" }
        let note = """
            anonymous growth holding all rows: Strata \(megabytes(strata.anonymousGrowth)), raw \
            \(megabytes(raw.anonymousGrowth)); peak growth (VmHWM − RSS before, file pages included): Strata \
            \(megabytes(strata.peakGrowth)) (\(format(Double(strata.peakGrowth) / rows, digits: 0)) B/row), raw \
            \(megabytes(raw.peakGrowth)) (\(format(Double(raw.peakGrowth) / rows, digits: 0)) B/row), ratio \
            \(raw.peakGrowth > 0 ? format(Double(strata.peakGrowth) / Double(raw.peakGrowth), digits: 2) : "—")×; \
            file pages: Strata +\(megabytes(strata.fileGrowth)), raw +\(megabytes(raw.fileGrowth))
            """
        var result = WorkloadResult(
            workload: .peakMemory, name: Workload.peakMemory.title, engine: engine, unit: "B/row",
            baselineName: "raw \(engine.displayName)", strata: strataPerRow, baseline: rawPerRow, ratio: ratio,
            difference: strataPerRow - rawPerRow, itemsPerRun: strata.rows, target: target?.label,
            targetLimit: target?.limit, targetMet: ratio.flatMap { ratio in target.map { ratio <= $0.limit } },
            status: "measured", note: note)
        result.memory = Figures(strata: strata, raw: raw)
        return result
    }

    /// Runs one side in a child process and decodes the line it prints.
    private static func child(_ engine: EngineChoice, _ side: String, rows: Int) throws -> Side {
        let process = SpawnedProcess()
        process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        process.arguments = [flag, engine.rawValue, side, String(rows)]
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

    /// The child mode: `--peak-memory ENGINE strata|raw ROWS`; prints one ``Side`` as JSON.
    static func main(_ arguments: [String]) async throws {
        guard arguments.count == 3, let engine = EngineChoice(rawValue: arguments[0]),
            arguments[1] == "strata" || arguments[1] == "raw", let rows = Int(arguments[2]), rows > 0
        else { throw BenchmarkError.usage("\(flag) takes an engine, strata or raw, and a number of rows") }
        let dataset = Dataset(rows: rows)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("strata-peak-\(UUID())")
        defer { removeScratch(directory) }
        let side =
            arguments[1] == "strata"
            ? try await strata(engine, dataset, directory) : try raw(engine, dataset, directory)
        print(String(decoding: try JSONEncoder().encode(side), as: UTF8.self))
    }

    private static func strata(_ engine: EngineChoice, _ dataset: Dataset, _ directory: URL) async throws -> Side {
        let store = try await StrataStore.make(engine, in: directory, dataset: dataset)
        _ = try await StrataWorkloads.insert(store, dataset)
        let before = ProcessMemory.resetPeak()
        let context = store.container.newBackgroundContext()
        let (holding, sum) = try await context.perform {
            var sum = Checksum()
            let objects = try context.fetch(FetchRequest<BenchRow>())
            for row in objects {
                sum.add(amount: row.amount, memo: row.memo, date: row.date.timeIntervalSinceReferenceDate)
            }
            let holding = ProcessMemory.read()
            withExtendedLifetime(objects) {}
            return (holding, sum)
        }
        return side(dataset.rowCount, before, holding, ProcessMemory.read(), sum)
    }

    private static func raw(_ engine: EngineChoice, _ dataset: Dataset, _ directory: URL) throws -> Side {
        let raw: any RawBaseline =
            switch engine {
            case .sqlite: try RawSQLite(directory: directory, dataset: dataset)
            case .lmdb: try RawLMDB(directory: directory, dataset: dataset)
            case .postgres: try RawPostgres(directory: directory, dataset: dataset)
            }
        defer { raw.close() }
        try raw.insertRows(dataset)
        let before = ProcessMemory.resetPeak()
        let (holding, sum) = try raw.withAllRows { rows in
            var sum = Checksum()
            sum.add(rows)
            return (ProcessMemory.read(), sum)
        }
        return side(dataset.rowCount, before, holding, ProcessMemory.read(), sum)
    }

    private static func side(
        _ rows: Int, _ before: ProcessMemory, _ holding: ProcessMemory, _ after: ProcessMemory, _ sum: Checksum
    ) -> Side {
        Side(
            rows: rows, rssBefore: before.resident, peakGrowth: max(after.peak, holding.peak) - before.resident,
            anonymousGrowth: holding.anonymous - before.anonymous, fileGrowth: holding.file - before.file,
            checksum: sum.description)
    }
}

/// The memory figures of this process from `/proc/self/status`, in bytes.
struct ProcessMemory {
    var resident = 0
    var peak = 0
    var anonymous = 0
    var file = 0

    static func read() -> ProcessMemory {
        var memory = ProcessMemory()
        guard let text = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return memory }
        for line in text.split(separator: "\n") {
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard fields.count > 1, let kilobytes = Int(fields[1]) else { continue }
            switch fields[0] {
            case "VmRSS:": memory.resident = kilobytes * 1024
            case "VmHWM:": memory.peak = kilobytes * 1024
            case "RssAnon:": memory.anonymous = kilobytes * 1024
            case "RssFile:": memory.file = kilobytes * 1024
            default: break
            }
        }
        return memory
    }

    /// Gives the heap's free memory back to the kernel (glibc's `malloc_trim`, which the Glibc
    /// module does not export, found by name), resets the peak resident set to the current one
    /// (`5` into `/proc/self/clear_refs`) and reads the figures.
    static func resetPeak() -> ProcessMemory {
        typealias Trim = @convention(c) (Int) -> Int32
        if let symbol = dlsym(nil, "malloc_trim") { _ = unsafeBitCast(symbol, to: Trim.self)(0) }
        try? "5".write(toFile: "/proc/self/clear_refs", atomically: false, encoding: .utf8)
        return read()
    }
}
