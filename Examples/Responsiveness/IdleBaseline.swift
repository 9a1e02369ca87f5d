import Foundation
import ResponsivenessKit
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// What the heartbeat measures with no store work at all: the machine's own floor.
///
/// Runs the main-actor heartbeat next to a plain thread that sleeps 1 ms with `nanosleep` in a
/// loop. If both see the same long gaps, the gaps are not the Swift runtime's (its timers, its
/// thread pool) but the machine's. For each of the plain thread's gaps of 3 ms or more it also
/// reports how much of the gap the thread spent runnable but waiting for a CPU (from
/// `/proc/thread-self/schedstat`) and how much CPU time the hypervisor took from the whole
/// machine meanwhile (the `steal` column of `/proc/stat`, in 10 ms ticks).
enum IdleBaseline {
    @MainActor
    static func run(seconds: Int) async throws {
        let thread = PlainThreadBeat()
        let before = CPUTicks.now()
        thread.start()
        let gaps = try await IdleHeartbeat.measure(for: .seconds(seconds))
        let (plain, long) = thread.stop()
        let stolen = CPUTicks.now().stolenPercent(since: before)
        print(
            "No store work for \(seconds) s. Machine CPU stolen by the hypervisor: \(String(format: "%.1f", stolen))%.")
        for (label, summary) in [
            ("main-actor heartbeat (Task.sleep)", gaps), ("plain thread (nanosleep)", GapSummary(plain)),
        ] {
            print(
                """
                \(label.padding(toLength: 36, withPad: " ", startingAt: 0)) ticks \(summary.ticks)  median \
                \(summary.median.milliseconds)  p99 \(summary.p99.milliseconds)  longest \
                \(summary.longest.milliseconds)  gaps ≥ 5 ms: \(summary.late)
                """
            )
        }
        print("Plain thread's five longest gaps (gap, runnable but waiting for a CPU, machine steal):")
        for gap in long.sorted(by: { $0.gap > $1.gap }).prefix(5) {
            print("  \(gap.gap.milliseconds), \(gap.waiting.milliseconds), \(gap.stealTicks * 10) ms")
        }
    }
}

/// A thread that sleeps 1 ms at a time and records its gaps.
private final class PlainThreadBeat: Sendable {
    struct LongGap: Sendable {
        var gap: Duration
        var waiting: Duration
        var stealTicks: Int
    }
    private let stopping = Atomic<Bool>(false)
    private let result = Mutex<([Duration], [LongGap])>(([], []))
    private let done = DispatchSemaphore(value: 0)

    func start() {
        Thread.detachNewThread { [self] in
            var gaps: [Duration] = []
            var long: [LongGap] = []
            var last = ContinuousClock.now
            var lastWait = Machine.runQueueWait()
            var lastSteal = CPUTicks.now().steal
            while !stopping.load(ordering: .relaxed) {
                Thread.sleep(forTimeInterval: 0.001)
                let now = ContinuousClock.now
                let wait = Machine.runQueueWait()
                let steal = CPUTicks.now().steal
                gaps.append(now - last)
                if now - last >= .milliseconds(3) {
                    long.append(
                        LongGap(gap: now - last, waiting: .nanoseconds(wait - lastWait), stealTicks: steal - lastSteal))
                }
                (last, lastWait, lastSteal) = (now, wait, steal)
            }
            result.withLock { $0 = (gaps, long) }
            done.signal()
        }
    }

    func stop() -> ([Duration], [LongGap]) {
        stopping.store(true, ordering: .relaxed)
        done.wait()
        return result.withLock { $0 }
    }
}

/// The calling thread's scheduler figures from `/proc` (Linux; zeros elsewhere).
private enum Machine {
    /// Nanoseconds the calling thread has spent runnable but waiting for a CPU.
    static func runQueueWait() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/thread-self/schedstat", encoding: .utf8) else { return 0 }
        let fields = text.split(separator: " ")
        return fields.count > 1 ? Int(fields[1]) ?? 0 : 0
    }
}
