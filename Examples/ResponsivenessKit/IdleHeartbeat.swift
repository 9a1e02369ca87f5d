/// The heartbeat with no store work at all: the floor that the machine, the scheduler and the
/// Swift runtime give a main-actor task that wants to run every millisecond.
///
/// A burst's gaps mean little without it: on a shared or virtual machine the heartbeat misses
/// ticks by many milliseconds with nothing running in the process.
///
/// ```swift
/// let floor = try await IdleHeartbeat.measure(for: run.elapsed)
/// print(floor.longest.milliseconds)
/// ```
public enum IdleHeartbeat {
    /// How long the heartbeat ticks before the first step and after the last.
    public static let margin = Duration.milliseconds(20)

    /// Ticks the same ``Heartbeat`` for `duration`, plus the same margins as a measured
    /// ``Burst``, with the main actor idle.
    /// - Throws: `CancellationError` if the task is cancelled while it sleeps.
    @MainActor
    public static func measure(for duration: Duration) async throws -> GapSummary {
        let heartbeat = Heartbeat()
        heartbeat.start()
        try await Task.sleep(for: margin + duration + margin)
        return GapSummary(await heartbeat.stop())
    }
}
