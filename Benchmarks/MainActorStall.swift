import Foundation
import Ledger
import ResponsivenessKit
import Strata
import StrataLMDB
import StrataSQLite

/// Workload 8: how long the main actor stalls while ledger operations run, with the
/// `@MainActor` shared-context pattern against fresh background contexts, beside the idle
/// heartbeat floor measured in the same run.
///
/// Both stores are seeded like the `responsiveness` example's (``Burst/makeStore(_:history:)``:
/// ten accounts with a history of transactions each, untimed). Each operation is a transfer, then
/// the source account's whole history, driven from the main actor and yielding between
/// operations as an app does between taps. Both variants run the same seeded steps. The idle
/// heartbeat (the same heartbeat, with no store work) runs before the variants, for a duration
/// estimated from a ten-step warm-up of each, and after them, for the longer variant's duration;
/// the floor is the larger of the two longest gaps.
///
/// Issue 16's requirement (a benchmark figure, not a test): the `@MainActor` pattern's longest gap
/// at least 5× the background variant's, and the background variant's longest gap within 1 ms of
/// the idle floor.
enum MainActorStall {
    /// Operations per variant.
    static let operations = 200
    /// Steps of the untimed warm-up of each variant.
    static let warmUpOperations = 10

    /// Transactions seeded per account: 20,000 from N = 100,000 up, N / 5 below (200 at the
    /// smoke test's N = 1,000).
    static func historySize(rows: Int) -> Int { min(20_000, rows / 5) }

    static func measure(_ engine: EngineChoice, in directory: URL, rows: Int) async throws -> [WorkloadResult] {
        let started = ContinuousClock.now
        let history = historySize(rows: rows)
        let shared = try await Burst.makeStore(
            configuration(engine, in: directory, name: "stall-main-actor"), history: history)
        let fresh = try await Burst.makeStore(
            configuration(engine, in: directory, name: "stall-background"), history: history)
        var figures = try await run(shared: shared, fresh: fresh, history: history)
        figures.seconds = (ContinuousClock.now - started).inMilliseconds / 1_000
        progress("  \(figures.summary(on: engine))")
        return results(figures, on: engine)
    }

    /// The warm-up, the idle run before, both variants and the idle run after, on the main actor.
    @MainActor
    static func run(
        shared: (PersistentContainer, [String]), fresh: (PersistentContainer, [String]), history: Int
    ) async throws -> StallFigures {
        let ledger = MainActorLedger(container: shared.0)
        let service = TransactionService(contexts: fresh.0)
        let warmUp = Burst(count: warmUpOperations, seed: 88)
        let warmUpLongest = max(
            try await warmUp.measure(ledger, accounts: shared.1).elapsed,
            try await warmUp.measure(service, accounts: fresh.1).elapsed)
        let estimate = warmUpLongest * (operations / warmUpOperations)

        let ticksBefore = CPUTicks.now()
        let idleBefore = try await IdleHeartbeat.measure(for: estimate)
        let burst = Burst(count: operations, seed: 8)
        let blocked = try await burst.measure(ledger, accounts: shared.1)
        let free = try await burst.measure(service, accounts: fresh.1)
        let longer = max(blocked.elapsed, free.elapsed)
        let idleAfter = try await IdleHeartbeat.measure(for: longer)
        let stolen = CPUTicks.now().stolenPercent(since: ticksBefore)

        return StallFigures(
            accounts: Burst.accountCount, historyPerAccount: history, operations: operations,
            mainActor: .init(blocked.gaps, lasting: blocked.elapsed),
            background: .init(free.gaps, lasting: free.elapsed),
            idleBefore: .init(idleBefore, lasting: estimate), idleAfter: .init(idleAfter, lasting: longer),
            idleFloorMilliseconds: max(idleBefore.longest, idleAfter.longest).inMilliseconds, stealPercent: stolen,
            seconds: 0)
    }

    /// The table's four lines for one engine: longest gap (with the ratio requirement), p99 gap,
    /// longest gap above the idle floor (with the floor requirement), and the floor itself.
    /// Strata is the background variant, Baseline the `@MainActor` pattern; Ratio is the
    /// pattern's gap over the background variant's (higher is better).
    static func results(_ figures: StallFigures, on engine: EngineChoice) -> [WorkloadResult] {
        let title = Workload.mainActorStall.title
        func line(
            _ name: String, strata: Double, baseline: Double?, ratio: Double?, target: String? = nil,
            limit: Double? = nil, met: Bool? = nil
        ) -> WorkloadResult {
            WorkloadResult(
                workload: .mainActorStall, name: "\(title), \(name)", engine: engine, unit: "ms",
                baselineName: baseline == nil ? nil : "@MainActor pattern", strata: strata, baseline: baseline,
                ratio: ratio, difference: baseline.map { strata - $0 }, itemsPerRun: figures.operations,
                target: target, targetLimit: limit, targetMet: met, status: "measured", strataSamples: nil,
                baselineSamples: nil, stall: name == "longest gap" ? figures : nil)
        }
        let background = figures.background
        let mainActor = figures.mainActor
        return [
            line(
                "longest gap", strata: background.longestMilliseconds, baseline: mainActor.longestMilliseconds,
                ratio: figures.longestRatio, target: "≥ \(format(StallFigures.requiredRatio, digits: 0))×",
                limit: StallFigures.requiredRatio, met: figures.ratioHolds),
            line(
                "p99 gap", strata: background.p99Milliseconds, baseline: mainActor.p99Milliseconds,
                ratio: background.p99Milliseconds > 0 ? mainActor.p99Milliseconds / background.p99Milliseconds : nil),
            line(
                "longest gap above idle floor", strata: figures.aboveFloor(background),
                baseline: figures.aboveFloor(mainActor), ratio: nil,
                target: "≤ \(format(StallFigures.floorMarginMilliseconds, digits: 0)) ms",
                limit: StallFigures.floorMarginMilliseconds, met: figures.backgroundNearFloor),
            line(
                "idle floor (longest gap, no store work)", strata: figures.idleFloorMilliseconds, baseline: nil,
                ratio: nil),
        ]
    }

    private static func configuration(_ engine: EngineChoice, in directory: URL, name: String) -> EngineConfiguration {
        switch engine {
        case .sqlite: .sqlite(at: directory.appendingPathComponent("\(name).sqlite"))
        case .lmdb: .lmdb(at: directory.appendingPathComponent(name))
        case .postgres: BenchmarkPostgres.configuration(for: directory.appendingPathComponent(name))
        }
    }
}
