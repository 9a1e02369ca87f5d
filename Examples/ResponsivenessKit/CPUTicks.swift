import Foundation

/// The whole machine's CPU time from the first line of `/proc/stat` (Linux; zeros elsewhere),
/// to tell how much of a measurement's time the hypervisor took ("steal").
///
/// ```swift
/// let before = CPUTicks.now()
/// // ... measure ...
/// print(CPUTicks.now().stolenPercent(since: before))
/// ```
public struct CPUTicks: Sendable, Equatable {
    /// Ticks the hypervisor ran something else while this machine's CPUs wanted to run.
    public var steal: Int
    /// Every column's ticks added up (user, system, idle, steal and the rest).
    public var total: Int

    /// The counters now; zeros when `/proc/stat` cannot be read.
    public static func now() -> CPUTicks {
        guard let text = try? String(contentsOfFile: "/proc/stat", encoding: .utf8),
            let line = text.split(separator: "\n").first
        else { return CPUTicks(steal: 0, total: 0) }
        let fields = line.split(separator: " ").dropFirst().compactMap { Int($0) }
        return fields.count > 7 ? CPUTicks(steal: fields[7], total: fields.reduce(0, +)) : CPUTicks(steal: 0, total: 0)
    }

    /// The share of the machine's CPU time stolen between `earlier` and these counters, in
    /// percent (0 when no time passed or the counters could not be read).
    public func stolenPercent(since earlier: CPUTicks) -> Double {
        let total = self.total - earlier.total
        return total > 0 ? 100 * Double(steal - earlier.steal) / Double(total) : 0
    }
}
