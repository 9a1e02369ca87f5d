import Foundation
import StrataTestSupport
import Testing

/// Runs the built `strata-bench` executable at N = 1,000 with one repetition and 10 commits for
/// the delivery latencies, so the benchmark's code paths (every workload, both raw baselines, the
/// second process of workload 12, the child processes of 14, 19 and 20, the table, JSON, SVG and
/// Markdown output) cannot rot. It
/// checks that the run completes and reports every workload; it never checks timings.
///
/// `swift build --build-tests` (and so `swift test`) builds every product, so the executable
/// sits next to the test bundle.
@Suite("strata-bench smoke test")
struct BenchmarkSmokeTests {
    @Test("strata-bench runs every workload on both engines at N = 1,000, 10 commits")
    func runsEveryWorkload() async throws {
        let binary = try #require(
            BenchmarkBinary.locate(),
            """
            strata-bench was not found next to the test bundle (\(BenchmarkBinary.searched.map(\.path))); build \
            it with swift build --build-tests
            """
        )
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "strata-bench-smoke-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let json = directory.appendingPathComponent("bench.json")
        let svg = directory.appendingPathComponent("bench.svg")
        let markdown = directory.appendingPathComponent("bench.md")

        let run = try await BenchmarkBinary.run(
            binary,
            [
                "--rows", "1000", "--repetitions", "1", "--engine", "all", "--commits", "10",
                "--json", json.path, "--svg", svg.path, "--markdown", markdown.path,
            ])
        #expect(run.status == 0, "strata-bench failed: \(run.errorOutput)")

        let lines = run.output.split(separator: "\n").map(String.init)
        for workload in [1, 2, 3, 4, 5, 6, 9, 10, 13, 14] {
            for engine in ["SQLite", "LMDB"] {
                let line = lines.first { $0.hasPrefix("\(workload) ") && $0.contains("  \(engine)  ") }
                #expect(line != nil, "no line for workload \(workload) on \(engine) in:\n\(run.output)")
                #expect(
                    line?.contains(workload == 6 ? " µs" : "×") == true,
                    "workload \(workload) on \(engine) has no comparison: \(line ?? "")")
            }
        }
        for engine in ["SQLite", "LMDB"] {
            SetBasedLines.check(lines, engine: engine, output: run.output)
            let transfers = lines.filter {
                $0.hasPrefix("7 ") && $0.contains("  \(engine)  ") && $0.contains("transfers/s")
            }
            #expect(
                transfers.count == 5 && transfers[4].contains("4 processes × 8 tasks")
                    && transfers[4].contains("(8 tasks, 1 process)"),
                "workload 7 on \(engine) should report 1, 2, 4 and 8 tasks and 4 processes in:\n\(run.output)")
            let stalls = lines.filter { $0.hasPrefix("8 ") && $0.contains("  \(engine)  ") && $0.contains(" ms") }
            #expect(
                stalls.count == 4 && stalls[0].contains("longest gap") && stalls[1].contains("p99 gap")
                    && stalls[2].contains("above idle floor") && stalls[3].contains("idle floor"),
                """
                workload 8 on \(engine) should report the longest and p99 gaps, the gap above the idle floor and \
                the floor in:\n\(run.output)
                """
            )
            #expect(
                run.output.contains("Workload 8 on \(engine): 200 operations"),
                "no workload 8 summary for \(engine) in:\n\(run.output)")
            for workload in [11, 12] {
                let latencies = lines.filter {
                    $0.hasPrefix("\(workload) ") && $0.contains("  \(engine)  ") && $0.contains(" ms")
                }
                #expect(
                    latencies.count == 2 && latencies[0].contains("p50") && latencies[1].contains("p99"),
                    "workload \(workload) on \(engine) should report p50 and p99 in:\n\(run.output)")
            }
        }

        let report = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: json)) as? [String: Any])
        let results = try #require(report["results"] as? [[String: Any]])
        let measured = results.filter { $0["status"] as? String == "measured" }
        var stallFigures = 0
        // 1–6, 9, 10, 13 and 14 on two engines (20); 7 five times (1, 2, 4, 8 tasks, 4 processes),
        // 8 four times, 11 and 12 twice on each (26); 15–20 set-based and through objects, 19 and 20
        // also their memory, on each (28).
        #expect(measured.count == 74)
        for result in measured {
            let workload = result["workload"] as? Int ?? 0
            #expect((result["strata"] as? Double ?? -1) >= 0, "\(result)")
            if workload == 14 {
                // Memory growth per row: at 1,000 rows the raw side's may round to zero pages.
                let memory = try #require(result["memory"] as? [String: Any], "\(result)")
                let strata = try #require(memory["strata"] as? [String: Any])
                #expect(strata["rows"] as? Int == 1000 && (strata["anonymousGrowth"] as? Int ?? 0) > 0, "\(result)")
                #expect((memory["raw"] as? [String: Any])?["checksum"] as? String == strata["checksum"] as? String)
            } else if result["unit"] as? String == "MB" {
                // 19 and 20's memory: growth at 1,000 rows may round to zero pages.
                let memory = try #require(result["setMemory"] as? [String: Any], "\(result)")
                let strata = try #require(memory["strata"] as? [String: Any])
                let raw = try #require(memory["raw"] as? [String: Any])
                #expect(strata["streamChecksum"] as? String == raw["streamChecksum"] as? String, "\(result)")
                #expect(strata["groupedSumChecksum"] as? String == raw["groupedSumChecksum"] as? String, "\(result)")
                #expect(strata["objectGraph"] != nil, "\(result)")
            } else if workload == 11 || workload == 12 {
                // Latencies: no baseline; the p50 line keeps every commit's latency.
                let samples = (result["strataSamples"] as? [String: Any])?["nanoseconds"] as? [Any]
                #expect(result["baseline"] == nil && (samples == nil || samples?.count == 10), "\(result)")
            } else if workload == 8 {
                // Gaps; a gap above the idle floor may be 0, and the floor's line has no baseline.
                #expect((result["baseline"] as? Double ?? 0) >= 0, "\(result)")
                if let stall = result["stall"] as? [String: Any] {
                    stallFigures += 1
                    #expect(stall["historyPerAccount"] as? Int == 200, "\(stall)")
                    #expect((stall["idleFloorMilliseconds"] as? Double ?? 0) > 0, "\(stall)")
                    let background = stall["background"] as? [String: Any]
                    #expect((background?["ticks"] as? Int ?? 0) > 0, "\(stall)")
                }
            } else {
                #expect((result["strata"] as? Double ?? 0) > 0 && (result["baseline"] as? Double ?? 0) > 0, "\(result)")
            }
        }
        #expect(stallFigures == 2, "workload 8's figures should be in the JSON once per engine")
        #expect(report["rows"] as? Int == 1000 && report["setRows"] as? Int == 1000)
        #expect(try String(contentsOf: svg, encoding: .utf8).hasPrefix("<svg"))
        #expect(try String(contentsOf: markdown, encoding: .utf8).contains("| 6 | fresh context vs reused"))
    }

    @Test("strata-bench rejects a bad argument with a usage message")
    func rejectsBadArguments() async throws {
        let binary = try #require(BenchmarkBinary.locate())
        let run = try await BenchmarkBinary.run(binary, ["--engine", "oracle"])
        #expect(run.status == 2)
        #expect(run.errorOutput.contains("usage: strata-bench"))
    }

    @Test("strata-bench --engine postgres without a server says how to name one")
    func postgresNeedsAServer() async throws {
        let binary = try #require(BenchmarkBinary.locate())
        let run = try await BenchmarkBinary.run(
            binary, ["--engine", "postgres", "--rows", "1000"], environment: ["STRATA_POSTGRES_URL": ""])
        #expect(run.status == 2)
        #expect(run.errorOutput.contains("--postgres-url URL or set STRATA_POSTGRES_URL"), "\(run.errorOutput)")
    }

    @Test("strata-bench runs workloads 1-8, 10, 11, 13 and 15-20 on PostgreSQL at N = 1,000 and drops its schemas")
    func runsOnPostgres() async throws {
        let url = try #require(
            ProcessInfo.processInfo.environment["STRATA_POSTGRES_URL"].flatMap { $0.isEmpty ? nil : $0 },
            """
            STRATA_POSTGRES_URL is not set: run the tests under bash Scripts/with-postgres.sh \
            (bash Scripts/with-postgres.sh swift test), which starts a server
            """
        )
        let binary = try #require(BenchmarkBinary.locate())
        let run = try await BenchmarkBinary.run(
            binary,
            [
                "--rows", "1000", "--repetitions", "1", "--engine", "postgres", "--postgres-url", url, "--commits",
                "10",
                // 9 needs migrations that change tables, which the engine does not make yet; 12 and 14
                // are not run on PostgreSQL (asked for here to see them refused).
                "--workloads", "1,2,3,4,5,6,7,8,10,11,12,13,14,15,16,17,18,19,20",
            ])
        #expect(run.status == 0, "strata-bench failed: \(run.errorOutput)")

        let lines = run.output.split(separator: "\n").map(String.init).filter { $0.contains("  PostgreSQL  ") }
        for workload in [1, 2, 3, 4, 5, 6, 10, 13] {
            let line = lines.first { $0.hasPrefix("\(workload) ") }
            #expect(
                line?.contains(workload == 6 ? " µs" : "×") == true,
                "workload \(workload) has no comparison on PostgreSQL in:\n\(run.output)")
        }
        let transfers = lines.filter { $0.hasPrefix("7 ") && $0.contains("transfers/s") }
        #expect(transfers.count == 5 && transfers[4].contains("4 processes × 8 tasks"), "\(run.output)")
        #expect(lines.filter { $0.hasPrefix("8 ") && $0.contains(" ms") }.count == 4, "\(run.output)")
        #expect(lines.filter { $0.hasPrefix("11 ") && $0.contains(" ms") }.count == 2, "\(run.output)")
        SetBasedLines.check(lines, engine: "PostgreSQL", output: run.output)
        #expect(!lines.contains { $0.hasPrefix("12 ") || $0.hasPrefix("14 ") }, "\(run.output)")
        #expect(run.errorOutput.contains("12. not run") && run.errorOutput.contains("14. not run"))

        // The run's schemas (named in its progress line) are gone.
        let prefix = try #require(
            run.errorOutput.split(separator: "\n").first { $0.contains("schemas strata_bench_") }?
                .split(separator: " ").last.map { String($0.dropLast()) },
            "no schema prefix in:\n\(run.errorOutput)")
        let left = try await BenchmarkBinary.run(
            URL(fileURLWithPath: "/usr/bin/env"),
            [
                "psql", "-X", "-A", "-t", url, "-c",
                "SELECT count(*) FROM pg_namespace WHERE starts_with(nspname, '\(prefix)')",
            ])
        #expect(left.status == 0 && left.output.trimmingCharacters(in: .whitespacesAndNewlines) == "0", "\(left)")
    }
}

/// The lines of the set-based workloads 15–20 on one engine.
enum SetBasedLines {
    /// Checks for each of 15–20 a set-based line against the raw baseline and an object-graph
    /// line, and for 19 and 20 a memory line in MB.
    static func check(_ lines: [String], engine: String, output: String) {
        for workload in 15...20 {
            let mine = lines.filter { $0.hasPrefix("\(workload) ") && $0.contains("  \(engine)  ") }
            let timed = mine.filter { $0.contains(" ns/row") && $0.contains("(raw \(engine))") && $0.contains("×") }
            #expect(
                timed.count == 2 && timed.filter { $0.contains("(object graph)") }.count == 1,
                "workload \(workload) on \(engine) should report the set-based call and the object graph in:\n\(output)"
            )
            #expect(
                mine.filter { $0.contains(" MB ") }.count == (workload >= 19 ? 1 : 0),
                "workload \(workload) on \(engine): memory line in:\n\(output)")
        }
    }
}

/// Finds and runs the `strata-bench` executable built beside the test bundle.
enum BenchmarkBinary {
    /// The directories searched: the test bundle's and the test executable's.
    static var searched: [URL] {
        var directories = [Bundle.main.bundleURL.deletingLastPathComponent(), Bundle.main.bundleURL]
        if let executable = Bundle.main.executableURL { directories.append(executable.deletingLastPathComponent()) }
        directories.append(URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent())
        directories.append(URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent())
        return directories
    }

    static func locate() -> URL? {
        searched.map { $0.appendingPathComponent("strata-bench") }
            .first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }

    /// Runs the binary to its end and collects its exit status, standard output and standard
    /// error, waiting on a thread of its own (``Blocking``), not on the calling task's.
    static func run(
        _ binary: URL, _ arguments: [String], environment: [String: String] = [:]
    ) async throws -> (status: Int32, output: String, errorOutput: String) {
        try await Blocking.run { try runBlocking(binary, arguments, environment: environment) }
    }

    /// ``run(_:_:environment:)`` on the calling thread: only for short commands where a test
    /// cannot await (a `defer`).
    static func runBlocking(
        _ binary: URL, _ arguments: [String], environment: [String: String] = [:]
    ) throws -> (status: Int32, output: String, errorOutput: String) {
        let process = SpawnedProcess()
        process.executableURL = binary
        process.arguments = arguments
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        // Drain standard error on another thread so neither pipe can fill up and block the child.
        let errorData = ErrorCollector()
        let drained = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            errorData.data = errors.fileHandleForReading.readDataToEndOfFile()
            drained.signal()
        }
        let outputData = output.fileHandleForReading.readDataToEndOfFile()
        drained.wait()
        process.waitUntilExit()
        return (
            process.terminationStatus, String(decoding: outputData, as: UTF8.self),
            String(decoding: errorData.data, as: UTF8.self)
        )
    }

    private final class ErrorCollector: @unchecked Sendable {
        var data = Data()
    }
}
