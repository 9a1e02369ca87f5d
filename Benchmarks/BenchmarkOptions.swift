import Foundation

/// The command line of `strata-bench`.
///
///     strata-bench [--rows N] [--engine sqlite|lmdb|postgres|all|LIST] [--postgres-url URL] [--repetitions R]
///                  [--workloads 1,2,...] [--clock wall|cpu] [--history on|off] [--commits C]
///                  [--json FILE] [--svg FILE] [--markdown FILE]
struct BenchmarkOptions: Sendable {
    var rows = 100_000
    /// Rows of the set-based workloads 15–20: 1,000,000 as issue 25 sets, unless `--rows` is given.
    var setRows = 1_000_000
    /// Default: the embedded engines; PostgreSQL only when named, since it needs a server.
    var engines: [EngineChoice] = EngineChoice.embedded
    /// The PostgreSQL server (`--postgres-url`, else `STRATA_POSTGRES_URL`); used only when
    /// `engines` holds `.postgres`.
    var postgresURL: String? = ProcessInfo.processInfo.environment[BenchmarkPostgres.variable].flatMap {
        $0.isEmpty ? nil : $0
    }
    /// Timed repetitions per measurement; the median is reported. One warm-up run precedes them.
    var repetitions = 5
    /// Timed repetitions of the set-based workloads 15 and 20, which write or read all N rows: 1
    /// (after the warm-up), so that a run of all six on three engines at 1,000,000 rows stays near
    /// 10 minutes, unless `--repetitions` is given.
    var setRepetitions = 1
    /// Timed repetitions of the shorter set-based workloads 16–19 (a tenth of N written, or one
    /// aggregate): 5 (18 at most 4), unless `--repetitions` is given. One run is not enough: an LMDB
    /// commit that rewrites a tenth of the rows takes one of two times, whether LMDB's page
    /// allocator reuses the pages an earlier commit freed (scattered writes) or appends, and a
    /// single run's ratio then depends on which of the two each side's one commit met
    /// (Docs/Benchmarks.md, "LMDB's writes at 1,000,000 rows").
    var setShortRepetitions = 5
    var jsonPath: String?
    var svgPath: String?
    var markdownPath: String?
    /// Wall time, or the process's CPU time (for a machine shared with other work).
    var clock = ClockSource.wall
    /// The workloads to measure (default: all). Stores are still filled when 1 is left out.
    var workloads = Set(Workload.allCases)
    /// Whether the stores of workloads 1–6 and 9 record persistent history (the default, as an
    /// application's do); off to compare, e.g. in `Scripts/count-instructions.sh`.
    var recordsHistory = true
    /// Commits per engine of the delivery-latency workloads 11 and 12.
    var commits = 1_000

    static let usage = """
        usage: strata-bench [--rows N] [--engine sqlite|lmdb|postgres|all|LIST] [--postgres-url URL]
                            [--repetitions R] [--workloads 1,2,...] [--clock wall|cpu] [--history on|off]
                            [--hook none|noop]
                            [--commits C] [--json FILE] [--svg FILE] [--markdown FILE]
          --rows N          rows in the data set (default 100000, at least 1000; the set-based
                            workloads 15–20 default to 1000000, and follow --rows when it is given)
          --engine E        sqlite, lmdb, postgres, all (sqlite and lmdb: the default) or a list
                            such as sqlite,postgres
          --postgres-url U  the PostgreSQL server of --engine postgres (default: $STRATA_POSTGRES_URL);
                            every store is a schema strata_bench_<run>_…, dropped at the end.
                            Workloads 12 and 14 (child processes) are not run on postgres
          --repetitions R   timed repetitions after one warm-up; the median is reported (default 5;
                            for the set-based workloads, 1 for 15 and 20 and 5 for 16–19 (18: at
                            most 4); all follow R when it is given)
          --workloads LIST  measure only these workloads, e.g. 2,3 (default all; for profiling).
                            14 is the memory of fetching all N rows and holding them, each side
                            in a child process of its own: growth of anonymous memory (the
                            compared figure), of the peak resident set and of file pages, in
                            bytes per row; e.g. --rows 1000000 --workloads 1,2,3,5,13,14.
                            15–20 (issue 25) are the set-based operations on a model of their own
                            (entries with an indexed category, an amount, a note, a unique external
                            ID and cascading lines), each beside the raw SQL or mdb_* job and the
                            same job through the object graph: 15 batch insert N, 16 upsert N/10
                            (half existing), 17 batch update 10%, 18 batch delete 10% with a
                            cascade, 19 sum grouped by category (+ peak memory, child processes),
                            20 streaming N in batches (+ peak memory, child processes)
          --clock C         wall (default) or cpu: the process's CPU time, less disturbed by other
                            load on the machine but blind to time spent waiting for the disk
          --history on|off  whether the stores of workloads 1–6 and 9 record persistent history
                            (default on; workload 10 measures both ways regardless)
          --hook none|noop  the Strata stores' instrumentation hook: none (the default) or one
                            that does nothing (to count what a set hook costs; see --hook-cost)
          --commits C       commits per engine for workloads 11 and 12 (default 1000, at least 10)
          --json FILE       write the results as JSON
          --svg FILE        write a bar chart of the ratios to raw as SVG
          --markdown FILE   write the results table as Markdown
          --row-decode      only time the LMDB row decoder (ns per row) and exit
        """

    /// Parses `arguments` (without the program name).
    /// - Throws: ``BenchmarkError/usage(_:)`` naming the bad argument.
    init(arguments: [String]) throws(BenchmarkError) {
        var remaining = arguments[...]
        func value(for flag: String) throws(BenchmarkError) -> String {
            guard let value = remaining.popFirst() else { throw .usage("\(flag) needs a value") }
            return value
        }
        while let flag = remaining.popFirst() {
            switch flag {
            case "--rows":
                guard let rows = Int(try value(for: flag)), rows >= 1_000 else {
                    throw .usage("--rows needs a whole number of at least 1000")
                }
                self.rows = rows
                setRows = rows
            case "--engine":
                let names = try value(for: flag)
                var chosen: [EngineChoice] = []
                for name in names.split(separator: ",").map(String.init) {
                    if name == "all" {
                        chosen += EngineChoice.embedded
                    } else if let engine = EngineChoice(rawValue: name) {
                        chosen.append(engine)
                    } else {
                        throw .usage("--engine takes sqlite, lmdb, postgres, all or a list of them, not \(names)")
                    }
                }
                guard !chosen.isEmpty else { throw .usage("--engine needs at least one engine") }
                engines = EngineChoice.allCases.filter(chosen.contains)
            case "--postgres-url":
                postgresURL = try value(for: flag)
            case "--repetitions":
                guard let count = Int(try value(for: flag)), count >= 1 else {
                    throw .usage("--repetitions needs a whole number of at least 1")
                }
                repetitions = count
                setRepetitions = count
                setShortRepetitions = count
            case "--workloads":
                let list = try value(for: flag)
                let chosen = list.split(separator: ",").map { Int($0).flatMap(Workload.init(rawValue:)) }
                guard !chosen.isEmpty, chosen.allSatisfy({ $0 != nil }) else {
                    throw .usage(
                        "--workloads takes numbers 1 to \(Workload.allCases.count) separated by commas, not \(list)")
                }
                workloads = Set(chosen.compactMap { $0 })
            case "--clock":
                let name = try value(for: flag)
                guard let source = ClockSource(rawValue: name) else {
                    throw .usage("--clock takes wall or cpu, not \(name)")
                }
                clock = source
            case "--history":
                switch try value(for: flag) {
                case "on": recordsHistory = true
                case "off": recordsHistory = false
                case let other: throw .usage("--history takes on or off, not \(other)")
                }
            case "--hook":
                // Read where the stores are made (`BenchmarkHook.chosen`); checked here.
                let name = try value(for: flag)
                guard BenchmarkHook(rawValue: name) != nil else {
                    throw .usage("--hook takes none or noop, not \(name)")
                }
            case "--commits":
                guard let count = Int(try value(for: flag)), count >= 10 else {
                    throw .usage("--commits needs a whole number of at least 10")
                }
                commits = count
            case "--json": jsonPath = try value(for: flag)
            case "--svg": svgPath = try value(for: flag)
            case "--markdown": markdownPath = try value(for: flag)
            case "--help", "-h": throw .help
            default: throw .usage("unknown argument \(flag)")
            }
        }
        if engines.contains(.postgres) && postgresURL == nil {
            throw .usage(
                "--engine postgres needs a server: pass --postgres-url URL or set \(BenchmarkPostgres.variable)")
        }
    }
}

/// The storage engines the benchmark measures.
enum EngineChoice: String, CaseIterable, Codable, Sendable {
    case sqlite
    case lmdb
    case postgres

    /// The engines that keep their store in local files: `--engine all`.
    static let embedded: [EngineChoice] = [.sqlite, .lmdb]

    var displayName: String {
        switch self {
        case .sqlite: "SQLite"
        case .lmdb: "LMDB"
        case .postgres: "PostgreSQL"
        }
    }

    /// Whether workloads that reopen the store in a child process (12, 14) run on this engine:
    /// the child would need the run's server and schema prefix, which it is not given.
    var runsChildProcesses: Bool { self != .postgres }
}

/// Why the benchmark stopped.
enum BenchmarkError: Error, CustomStringConvertible {
    case usage(String)
    case help
    /// Strata and the raw baseline disagreed about the data: the measurement would be meaningless.
    case mismatch(String)
    /// A raw C call failed.
    case raw(String)

    var description: String {
        switch self {
        case .usage(let message): "\(message)\n\(BenchmarkOptions.usage)"
        case .help: BenchmarkOptions.usage
        case .mismatch(let message): "results differ between Strata and the raw baseline: \(message)"
        case .raw(let message): "raw baseline failed: \(message)"
        }
    }
}
