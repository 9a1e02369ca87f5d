// Makes the article's thesis visible: a main-actor heartbeat ticks every millisecond while
// the same burst of ledger operations runs twice, driven from the main actor both times:
//
//   1. through a @MainActor service that reuses one context and waits for it synchronously
//      (the anti-pattern: the main actor is occupied for every unit of work), then
//   2. through the Ledger services: a fresh background context per operation, awaited with
//      `perform` (the main actor is free while the work runs).
//
// It prints the longest and the 99th-percentile gap between heartbeat ticks for each.
//
//   swift run -c release responsiveness [--engine sqlite|lmdb] [--operations N] [--history N]
//   swift run -c release responsiveness --idle SECONDS   (the heartbeat with no store work: the machine's floor)

import Foundation
import Ledger
import ResponsivenessKit
import Strata

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

/// Runs the burst from the main actor while the heartbeat ticks; returns the gaps and the time taken.
@MainActor
func measure(_ step: @MainActor (Step) async throws -> Void) async throws -> (GapSummary, Duration) {
    let heartbeat = Heartbeat()
    heartbeat.start()
    try await Task.sleep(for: .milliseconds(20))
    let started = ContinuousClock.now
    for item in burst.steps {
        try await step(item)
        await Task.yield() // between operations the main actor is free, as between taps
    }
    let elapsed = ContinuousClock.now - started
    try await Task.sleep(for: .milliseconds(20))
    return (GapSummary(await heartbeat.stop()), elapsed)
}

do {
    print("A main-actor heartbeat every 1 ms while \(operations) ledger operations run on \(engine), driven from")
    print("the main actor. Each is a transfer, then the source account's history, over \(Burst.accountCount) accounts")
    print("that start with \(history) transactions each.\n")

    let (sharedStore, sharedIDs) = try await Burst.makeStore(engine: engine, history: history)
    let mainActorLedger = MainActorLedger(container: sharedStore)
    let (blocked, blockedTime) = try await measure { step in
        try mainActorLedger.transfer(
            from: sharedIDs[step.from], to: sharedIDs[step.to], amount: step.amount, note: "burst")
        _ = try mainActorLedger.transactions(for: sharedIDs[step.from])
    }

    let (freshStore, freshIDs) = try await Burst.makeStore(engine: engine, history: history)
    let transactions = TransactionService(contexts: freshStore)
    let (free, freeTime) = try await measure { step in
        try await transactions.transfer(
            from: freshIDs[step.from], to: freshIDs[step.to], amount: step.amount, note: "burst")
        _ = try await transactions.transactions(for: freshIDs[step.from])
    }

    func row(_ label: String, _ summary: GapSummary, _ elapsed: Duration) -> String {
        label.padding(toLength: 40, withPad: " ", startingAt: 0)
            + [
                elapsed.milliseconds, String(summary.ticks), summary.median.milliseconds, summary.p99.milliseconds,
                summary.longest.milliseconds, String(summary.late),
            ]
            .map { $0.leftPadded(to: 13) }.joined()
    }
    print(
        "".padding(toLength: 40, withPad: " ", startingAt: 0)
            + ["burst time", "ticks", "median gap", "p99 gap", "longest gap", "gaps ≥ 5 ms"].map {
                $0.leftPadded(to: 13)
            }.joined())
    print(row("@MainActor service, one shared context", blocked, blockedTime))
    print(row("fresh background context + perform", free, freeTime))
    print(
        """
        \nLongest heartbeat gap: \(blocked.longest.milliseconds) on the main actor vs \
        \(free.longest.milliseconds) with background contexts;
        """
    )
    print(
        "p99: \(blocked.p99.milliseconds) vs \(free.p99.milliseconds). An ideal heartbeat has gaps of just over 1 ms.")
} catch {
    FileHandle.standardError.write(Data("responsiveness: error: \(error)\n".utf8))
    exit(1)
}

extension String {
    func leftPadded(to width: Int) -> String {
        String(repeating: " ", count: max(width - count, 0)) + self
    }
}
