// strata-bench: Strata against raw SQLite, raw LMDB and raw libpq, on the same data in one process.
//
//   swift run -c release strata-bench [--rows N] [--engine sqlite|lmdb|postgres|all|LIST]
//                                     [--postgres-url URL] [--repetitions R]
//                                     [--json FILE] [--svg FILE] [--markdown FILE]
//   swift run -c release strata-bench --row-decode    (the LMDB row decoder's cost per row)
//   swift run -c release strata-bench --hook-cost [ROWS] [R]  (workloads 1 and 3 without and with a no-op hook)
//   swift run -c release strata-bench --aggregate [ROWS]  (aggregate(_:) against the reference fold)
//   strata-bench --history-writer ENGINE DIR COMMITS   (workload 12's second process; not for people)
//   strata-bench --transfer-child ENGINE DIR TRANSFERS SEED [SCHEMA]   (workload 7's processes; not for people)
//   strata-bench --peak-memory ENGINE strata|raw ROWS   (workload 14's child processes; not for people)
//   strata-bench --bulk-writes ROWS   (one save of ROWS updates, one of ROWS deletes, on STRATA_POSTGRES_URL)
//   strata-bench --stream-rows ROWS   (peak memory of forEachRow over ROWS rows on STRATA_POSTGRES_URL)
//   strata-bench --set-memory ENGINE strata|raw DIR SCHEMA   (workloads 19–20's children; not for people)
//
// See Docs/Benchmarks.md for the workloads, the method and the latest results.

import Foundation

let arguments = Array(CommandLine.arguments.dropFirst())
if arguments == ["--row-decode"] {
    do {
        try RowDecodeTiming.run()
        exit(0)
    } catch {
        FileHandle.standardError.write(Data("strata-bench: \(error)\n".utf8))
        exit(1)
    }
}
if arguments.first == HookCost.flag {
    do {
        try await HookCost.main(Array(arguments.dropFirst()))
        exit(0)
    } catch {
        FileHandle.standardError.write(Data("strata-bench \(HookCost.flag): \(error)\n".utf8))
        exit(1)
    }
}
if arguments.first == AggregateTiming.flag {
    do {
        try AggregateTiming.run(Array(arguments.dropFirst()))
        exit(0)
    } catch {
        FileHandle.standardError.write(Data("strata-bench \(AggregateTiming.flag): \(error)\n".utf8))
        exit(1)
    }
}
if arguments.first == PeakMemory.flag {
    do {
        try await PeakMemory.main(Array(arguments.dropFirst()))
        exit(0)
    } catch {
        FileHandle.standardError.write(Data("strata-bench \(PeakMemory.flag): \(error)\n".utf8))
        exit(1)
    }
}
if arguments.first == StreamRead.flag {
    do {
        try StreamRead.main(Array(arguments.dropFirst()))
        exit(0)
    } catch {
        FileHandle.standardError.write(Data("strata-bench \(StreamRead.flag): \(error)\n".utf8))
        exit(1)
    }
}
if arguments.first == BulkWrites.flag {
    do {
        try await BulkWrites.main(Array(arguments.dropFirst()))
        exit(0)
    } catch {
        FileHandle.standardError.write(Data("strata-bench \(BulkWrites.flag): \(error)\n".utf8))
        exit(1)
    }
}
if arguments.first == SetBasedMemory.flag {
    do {
        try await SetBasedMemory.main(Array(arguments.dropFirst()))
        exit(0)
    } catch {
        FileHandle.standardError.write(Data("strata-bench \(SetBasedMemory.flag): \(error)\n".utf8))
        exit(1)
    }
}
if arguments.first == TransferProcesses.flag {
    do {
        try await TransferProcesses.main(Array(arguments.dropFirst()))
        exit(0)
    } catch {
        FileHandle.standardError.write(Data("strata-bench \(TransferProcesses.flag): \(error)\n".utf8))
        exit(1)
    }
}
if arguments.first == HistoryWriter.flag {
    do {
        try await HistoryWriter.main(Array(arguments.dropFirst()))
        exit(0)
    } catch {
        FileHandle.standardError.write(Data("strata-bench \(HistoryWriter.flag): \(error)\n".utf8))
        exit(1)
    }
}
do {
    let options = try BenchmarkOptions(arguments: arguments)
    let run = BenchmarkRun(options: options, command: (["strata-bench"] + arguments).joined(separator: " "))
    let report = try await run.run()
    print(ReportTable.text(report), terminator: "")
    try run.write(report)
} catch BenchmarkError.help {
    print(BenchmarkOptions.usage)
} catch let error as BenchmarkError {
    FileHandle.standardError.write(Data("strata-bench: \(error)\n".utf8))
    exit(2)
} catch {
    FileHandle.standardError.write(Data("strata-bench: \(error)\n".utf8))
    exit(1)
}
