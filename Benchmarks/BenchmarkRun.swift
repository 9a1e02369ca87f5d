import Foundation

/// One whole run: every chosen engine, then the outputs the options ask for.
struct BenchmarkRun {
    let options: BenchmarkOptions
    let command: String

    func run() async throws -> BenchmarkReport {
        Clock.source = options.clock
        if options.engines.contains(.postgres) {
            BenchmarkPostgres.url = options.postgresURL
            try BenchmarkPostgres.check()
            progress("PostgreSQL \(BenchmarkPostgres.serverVersion ?? "?"): schemas \(BenchmarkPostgres.prefix)*")
        }
        defer {
            for problem in BenchmarkPostgres.dropRunSchemas() { progress(problem) }
        }
        let started = DispatchTime.now().uptimeNanoseconds
        let date = ISO8601DateFormatter().string(from: Date())
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("strata-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { removeScratch(scratch) }

        progress("generating \(options.rows) rows")
        let dataset = Dataset(rows: options.rows)
        var results: [WorkloadResult] = []
        // Without any of workloads 1–6 and 9, no store is filled for them.
        for engine in options.engines where !options.workloads.isDisjoint(with: EngineBenchmark.covered) {
            let benchmark = EngineBenchmark(
                engine: engine, dataset: dataset, repetitions: options.repetitions, workloads: options.workloads,
                recordsHistory: options.recordsHistory, scratch: scratch.appendingPathComponent(engine.rawValue),
                progress: progress)
            results += try await benchmark.run()
        }
        results += try await LedgerWorkloads.run(options: options, scratch: scratch)
        results += try await HistoryWorkloads.run(options: options, dataset: dataset, scratch: scratch)
        results += try PeakMemory.run(options: options)
        results += try await SetBasedBenchmark.run(options: options, scratch: scratch)
        results.sort { $0.workload.rawValue < $1.workload.rawValue }
        return BenchmarkReport(
            command: command, date: date, rows: options.rows,
            setRows: options.workloads.isDisjoint(with: Workload.setBased) ? nil : options.setRows,
            setRepetitions: options.workloads.isDisjoint(with: Workload.setBased) ? nil : options.setRepetitions,
            setShortRepetitions: options.workloads.isDisjoint(with: Workload.setBased)
                ? nil : options.setShortRepetitions,
            repetitions: options.repetitions, warmUps: 1,
            machine: .current(), clock: options.clock,
            seconds: Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9, results: results)
    }

    /// Writes the files the options name.
    func write(_ report: BenchmarkReport) throws {
        if let path = options.jsonPath { try report.json().write(to: URL(fileURLWithPath: path)) }
        if let path = options.svgPath { try Data(SVGChart.render(report).utf8).write(to: URL(fileURLWithPath: path)) }
        if let path = options.markdownPath {
            try Data(ReportTable.markdown(report).utf8).write(to: URL(fileURLWithPath: path))
        }
    }
}

/// Progress lines go to standard error, so standard output holds only the table.
@Sendable func progress(_ line: String) {
    FileHandle.standardError.write(Data("strata-bench: \(line)\n".utf8))
}
