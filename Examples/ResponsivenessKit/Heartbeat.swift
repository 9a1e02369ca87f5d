import Foundation

/// A main-actor task that wakes every millisecond and records when it actually ran.
///
/// Whenever the main actor is busy, a tick is late, and the gap between two ticks grows: the
/// gaps are what a user would feel as frozen input or dropped frames.
@MainActor
public final class Heartbeat {
    /// A heartbeat that has not started.
    public init() {}

    private var ticks: [ContinuousClock.Instant] = []
    private var task: Task<Void, Never>?

    /// Starts ticking every millisecond on the main actor.
    public func start() {
        ticks = [ContinuousClock.now]
        ticks.reserveCapacity(100_000)
        task = Task { @MainActor [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(1))
                self?.ticks.append(ContinuousClock.now)
            }
        }
    }

    /// Stops the heartbeat and returns the gaps between consecutive ticks.
    public func stop() async -> [Duration] {
        task?.cancel()
        await task?.value
        task = nil
        return zip(ticks, ticks.dropFirst()).map { $1 - $0 }
    }
}

/// Summary figures of a list of heartbeat gaps.
public struct GapSummary: Sendable {
    /// How many gaps were measured.
    public var ticks: Int
    /// The longest gap.
    public var longest: Duration
    /// The 99th-percentile gap.
    public var p99: Duration
    /// The median gap.
    public var median: Duration
    /// Gaps of 5 ms or more: moments a user could notice.
    public var late: Int

    /// Summarises heartbeat gaps.
    public init(_ gaps: [Duration]) {
        let sorted = gaps.sorted()
        func percentile(_ p: Double) -> Duration {
            guard !sorted.isEmpty else { return .zero }
            let rank = Int((p * Double(sorted.count)).rounded(.up)) - 1
            return sorted[min(max(rank, 0), sorted.count - 1)]
        }
        ticks = gaps.count
        longest = sorted.last ?? .zero
        p99 = percentile(0.99)
        median = percentile(0.5)
        late = gaps.count { $0 >= .milliseconds(5) }
    }
}

extension Duration {
    /// Milliseconds with one decimal, e.g. `"12.3 ms"`.
    public var milliseconds: String {
        let value = Double(components.seconds) * 1_000 + Double(components.attoseconds) / 1e15
        return String(format: "%.1f ms", value)
    }
}
