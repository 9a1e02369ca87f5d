import Foundation
import Ledger
import ResponsivenessKit
import Strata
import StrataTestSupport

/// Workload 8: how long the main actor stalls while ledger operations run, with the
/// `@MainActor` shared-context pattern against fresh background contexts.
///
/// Every operation reads one account's history; every tenth also makes a transfer. The loop is
/// driven from the main actor in both variants, yielding between operations as an app does
/// between user actions. Issue 5's target: the longest gap with background contexts under
/// 1 ms and a clear multiple (here: at most half) of the `@MainActor` pattern's.
enum MainActorStall {
    static func measure(_ engine: EngineChoice, in directory: URL, rows: Int) async throws -> [WorkloadResult] {
        let operations = max(100, min(rows / 10, 10_000))
        let (sharedStore, sharedIDs) = try await LedgerWorkloads.makeLedger(
            engine, in: directory, name: "stall-main-actor", accounts: 10)
        let blocked = try await run(operations: operations) { @MainActor in
            MainActorSide(ledger: MainActorLedger(container: sharedStore), accounts: sharedIDs)
        }
        let (freshStore, freshIDs) = try await LedgerWorkloads.makeLedger(
            engine, in: directory, name: "stall-background", accounts: 10)
        let free = try await run(operations: operations) { @MainActor in
            BackgroundSide(service: TransactionService(contexts: freshStore), accounts: freshIDs)
        }
        func milliseconds(_ duration: Duration) -> Double {
            Double(duration.components.seconds) * 1_000 + Double(duration.components.attoseconds) / 1e15
        }
        let longest = (milliseconds(free.longest), milliseconds(blocked.longest))
        let p99 = (milliseconds(free.p99), milliseconds(blocked.p99))
        let longestRatio = longest.1 > 0 ? longest.0 / longest.1 : nil
        return [
            WorkloadResult(
                workload: .mainActorStall, name: "\(Workload.mainActorStall.title), longest gap", engine: engine,
                unit: "ms",
                baselineName: "@MainActor pattern", strata: longest.0, baseline: longest.1, ratio: longestRatio,
                difference: longest.0 - longest.1,
                itemsPerRun: operations, target: "< 1 ms, ≤ 0.5×", targetLimit: 1,
                targetMet: longest.0 < 1 && (longestRatio ?? 1) <= 0.5,
                status: "measured", strataSamples: nil, baselineSamples: nil),
            WorkloadResult(
                workload: .mainActorStall, name: "\(Workload.mainActorStall.title), p99 gap", engine: engine,
                unit: "ms",
                baselineName: "@MainActor pattern", strata: p99.0, baseline: p99.1,
                ratio: p99.1 > 0 ? p99.0 / p99.1 : nil, difference: p99.0 - p99.1,
                itemsPerRun: operations, target: nil, targetLimit: nil, targetMet: nil, status: "measured",
                strataSamples: nil, baselineSamples: nil),
        ]
    }

    /// Runs the operations from the main actor while the heartbeat ticks.
    @MainActor
    static func run(operations: Int, side makeSide: @MainActor () -> any LedgerSide) async throws -> GapSummary {
        let side = makeSide()
        var random = SeededGenerator(seed: 8)
        let heartbeat = Heartbeat()
        heartbeat.start()
        try await Task.sleep(for: .milliseconds(20))
        for index in 0..<operations {
            let from = Int.random(in: 0..<10, using: &random)
            let to = (from + Int.random(in: 1..<10, using: &random)) % 10
            try await side.step(index: index, from: from, to: to)
            await Task.yield()
        }
        try await Task.sleep(for: .milliseconds(20))
        return GapSummary(await heartbeat.stop())
    }
}

/// One variant of the ledger work, driven from the main actor.
@MainActor
protocol LedgerSide {
    func step(index: Int, from: Int, to: Int) async throws
}

/// The anti-pattern: the main actor waits for a shared context for every operation.
@MainActor
struct MainActorSide: LedgerSide {
    let ledger: MainActorLedger
    let accounts: [String]

    func step(index: Int, from: Int, to: Int) async throws {
        if index % 10 == 0 { try ledger.transfer(from: accounts[from], to: accounts[to], amount: 1, note: "stall") }
        _ = try ledger.transactions(for: accounts[from])
    }
}

/// The pattern: each operation a fresh background context, awaited.
@MainActor
struct BackgroundSide: LedgerSide {
    let service: TransactionService
    let accounts: [String]

    func step(index: Int, from: Int, to: Int) async throws {
        if index % 10 == 0 {
            try await service.transfer(from: accounts[from], to: accounts[to], amount: 1, note: "stall")
        }
        _ = try await service.transactions(for: accounts[from])
    }
}
