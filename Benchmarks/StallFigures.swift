import Foundation
import ResponsivenessKit

/// Workload 8's whole measurement on one engine, kept in the JSON beside its table rows: both
/// variants, the idle heartbeat before and after them, machine steal, and the issue's two
/// requirements checked.
struct StallFigures: Codable, Sendable {
    /// One heartbeat run's gaps, in milliseconds.
    struct Gaps: Codable, Sendable {
        var ticks: Int
        var medianMilliseconds: Double
        var p99Milliseconds: Double
        var longestMilliseconds: Double
        /// Gaps of 5 ms or more.
        var late: Int
        /// How long the steps ran (for an idle run: how long it ticked, without the margins).
        var seconds: Double

        init(_ summary: GapSummary, lasting duration: Duration) {
            ticks = summary.ticks
            medianMilliseconds = summary.median.inMilliseconds
            p99Milliseconds = summary.p99.inMilliseconds
            longestMilliseconds = summary.longest.inMilliseconds
            late = summary.late
            seconds = duration.inMilliseconds / 1_000
        }
    }

    /// The least multiple of the background variant's longest gap that the `@MainActor`
    /// pattern's must reach (issue 16).
    static let requiredRatio = 5.0
    /// How far above the idle floor the background variant's longest gap may be (issue 16).
    static let floorMarginMilliseconds = 1.0

    var accounts: Int
    var historyPerAccount: Int
    var operations: Int
    var mainActor: Gaps
    var background: Gaps
    /// The idle heartbeat before the variants, for the duration estimated from the warm-up.
    var idleBefore: Gaps
    /// The idle heartbeat after the variants, for the longer variant's duration.
    var idleAfter: Gaps
    /// The longer of the two idle runs' longest gaps.
    var idleFloorMilliseconds: Double
    /// The machine's CPU time the hypervisor took from the first idle run's start to the second's
    /// end, in percent.
    var stealPercent: Double
    /// Seeding, warm-up, both variants and both idle runs.
    var seconds: Double

    /// A variant's longest gap less the idle floor, or 0 when it is below the floor.
    func aboveFloor(_ gaps: Gaps) -> Double { max(0, gaps.longestMilliseconds - idleFloorMilliseconds) }

    /// The `@MainActor` pattern's longest gap / the background variant's (nil when the latter is 0).
    var longestRatio: Double? {
        background.longestMilliseconds > 0 ? mainActor.longestMilliseconds / background.longestMilliseconds : nil
    }

    /// Whether the `@MainActor` pattern's longest gap is at least ``requiredRatio`` times the
    /// background variant's.
    var ratioHolds: Bool { (longestRatio ?? 0) >= Self.requiredRatio }

    /// Whether the background variant's longest gap is within ``floorMarginMilliseconds`` of the
    /// idle floor.
    var backgroundNearFloor: Bool { aboveFloor(background) <= Self.floorMarginMilliseconds }

    /// One paragraph for the report, e.g. for the text table's foot.
    func summary(on engine: EngineChoice) -> String {
        func ms(_ value: Double) -> String { format(value, digits: 1) + " ms" }
        return """
            Workload 8 on \(engine.displayName): \(operations) operations (a transfer, then the source account's \
            whole history), \(accounts) accounts of \(historyPerAccount) seeded transactions; \
            \(format(seconds, digits: 0)) s in all. Idle floor \(ms(idleFloorMilliseconds)) (before \
            \(ms(idleBefore.longestMilliseconds)), after \(ms(idleAfter.longestMilliseconds)); idle p99 \
            \(ms(idleBefore.p99Milliseconds)) and \(ms(idleAfter.p99Milliseconds))); machine steal \
            \(format(stealPercent, digits: 1))%. @MainActor pattern: longest \(ms(mainActor.longestMilliseconds)), \
            p99 \(ms(mainActor.p99Milliseconds)), \(ms(aboveFloor(mainActor))) above the floor, \
            \(format(mainActor.seconds, digits: 1)) s. Background contexts: longest \
            \(ms(background.longestMilliseconds)), p99 \(ms(background.p99Milliseconds)), \
            \(ms(aboveFloor(background))) above the floor, \(format(background.seconds, digits: 1)) s. \
            @MainActor longest / background longest = \(longestRatio.map { format($0, digits: 2) } ?? "—")× \
            (≥ \(format(Self.requiredRatio, digits: 0))×: \(ratioHolds ? "holds" : "does not hold")); \
            background within \(format(Self.floorMarginMilliseconds, digits: 0)) ms of the idle floor: \
            \(backgroundNearFloor ? "holds" : "does not hold").
            """
    }
}

extension Duration {
    /// This duration in milliseconds.
    var inMilliseconds: Double {
        Double(components.seconds) * 1_000 + Double(components.attoseconds) / 1e15
    }
}
