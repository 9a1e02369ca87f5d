// Makes the article's thesis visible: a main-actor heartbeat ticks every millisecond while
// the same burst of ledger operations runs twice, driven from the main actor both times:
//
//   1. through a @MainActor service that reuses one context and waits for it synchronously
//      (the anti-pattern: the main actor is occupied for every unit of work), then
//   2. through the Ledger services: a fresh background context per operation, awaited with
//      `perform` (the main actor is free while the work runs).
//
// It prints the longest and the 99th-percentile gap between heartbeat ticks for each.
// `strata-bench`'s workload 8 measures the same burst on the same stores (ResponsivenessKit).
//
//   swift run -c release responsiveness [--engine sqlite|lmdb] [--operations N] [--history N]
//   swift run -c release responsiveness --idle SECONDS   (the heartbeat with no store work: the machine's floor)

import Foundation
import Ledger
import ResponsivenessKit
import Strata
import StrataLMDB
import StrataSQLite

let arguments = CommandLine.arguments
func option(_ name: String) -> String? {
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}
let engine = option("--engine") ?? "sqlite"
let operations = Int(option("--operations") ?? "") ?? 100
let history = Int(option("--history") ?? "") ?? 5_000
guard engine == "sqlite" || engine == "lmdb", operations > 0, history >= 0 else {
    FileHandle.standardError.write(
        Data("usage: responsiveness [--engine sqlite|lmdb] [--operations N] [--history N]\n".utf8))
    exit(64)
}

if let idle = option("--idle") {
    guard let seconds = Int(idle), seconds > 0 else {
        FileHandle.standardError.write(Data("usage: responsiveness --idle SECONDS\n".utf8))
        exit(64)
    }
    try await IdleBaseline.run(seconds: seconds)
    exit(0)
}

let burst = Burst(count: operations, seed: 2024)

/// A new store on the chosen engine in a temporary location, seeded with `history` transactions
/// per account.
func makeStore() async throws -> (PersistentContainer, [String]) {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent(
        "responsiveness-\(UUID().uuidString)\(engine == "lmdb" ? ".lmdb" : ".sqlite")")
    return try await Burst.makeStore(engine == "lmdb" ? .lmdb(at: url) : .sqlite(at: url), history: history)
}

do {
    print("A main-actor heartbeat every 1 ms while \(operations) ledger operations run on \(engine), driven from")
    print("the main actor. Each is a transfer, then the source account's history, over \(Burst.accountCount) accounts")
    print("that start with \(history) transactions each.\n")

    let (sharedStore, sharedIDs) = try await makeStore()
    let blocked = try await burst.measure(MainActorLedger(container: sharedStore), accounts: sharedIDs)

    let (freshStore, freshIDs) = try await makeStore()
    let free = try await burst.measure(TransactionService(contexts: freshStore), accounts: freshIDs)

    func row(_ label: String, _ run: BurstRun) -> String {
        let summary = run.gaps
        return label.padding(toLength: 40, withPad: " ", startingAt: 0)
            + [
                run.elapsed.milliseconds, String(summary.ticks), summary.median.milliseconds, summary.p99.milliseconds,
                summary.longest.milliseconds, String(summary.late),
            ]
            .map { $0.leftPadded(to: 13) }.joined()
    }
    print(
        "".padding(toLength: 40, withPad: " ", startingAt: 0)
            + ["burst time", "ticks", "median gap", "p99 gap", "longest gap", "gaps ≥ 5 ms"].map {
                $0.leftPadded(to: 13)
            }.joined())
    print(row("@MainActor service, one shared context", blocked))
    print(row("fresh background context + perform", free))
    print(
        """
        \nLongest heartbeat gap: \(blocked.gaps.longest.milliseconds) on the main actor vs \
        \(free.gaps.longest.milliseconds) with background contexts;
        """
    )
    print(
        """
        p99: \(blocked.gaps.p99.milliseconds) vs \(free.gaps.p99.milliseconds). An ideal heartbeat has gaps of just \
        over 1 ms.
        """
    )
} catch {
    FileHandle.standardError.write(Data("responsiveness: error: \(error)\n".utf8))
    exit(1)
}

extension String {
    func leftPadded(to width: Int) -> String {
        String(repeating: " ", count: max(width - count, 0)) + self
    }
}
