import Foundation

/// Samples this process's memory every 2 ms on a thread of its own while a phase runs: the
/// resident set less the store-file pages mapped since the phase began (LMDB's map; the same
/// file pages on every side), at its highest, and the kernel's exact peak (`VmHWM`).
///
/// Used by the memory children of workloads 19 and 20 (``SetBasedMemory``).
final class MemorySampler: @unchecked Sendable {
    /// What one phase took, in bytes.
    struct Phase: Codable, Sendable {
        /// `VmRSS` when the phase began (after `malloc_trim` and the peak's reset).
        var rssBefore = 0
        /// The highest sampled `VmRSS − (RssFile − RssFile before)`.
        var peakResident = 0
        /// `VmHWM` at the end: the exact peak, file pages included.
        var peakWithFilePages = 0
        /// The most file pages the phase mapped (`RssFile` growth).
        var fileGrowth = 0

        /// ``peakResident`` − ``rssBefore``.
        var growth: Int { peakResident - rssBefore }
    }

    private let lock = NSLock()
    private var running = true
    private var phase = Phase()
    private let fileBefore: Int
    private var thread: Thread?

    private init(before: ProcessMemory) {
        fileBefore = before.file
        phase.rssBefore = before.resident
        phase.peakResident = before.resident
    }

    /// Gives freed heap back, resets the peak, then runs `body` while sampling.
    static func measure<T>(_ body: () async throws -> T) async rethrows -> (Phase, T) {
        let sampler = MemorySampler(before: ProcessMemory.resetPeak())
        let thread = Thread { sampler.loop() }
        sampler.thread = thread
        thread.start()
        let value = try await body()
        sampler.sample()
        sampler.lock.withLock { sampler.running = false }
        var phase = sampler.lock.withLock { sampler.phase }
        phase.peakWithFilePages = max(ProcessMemory.read().peak, phase.peakResident)
        return (phase, value)
    }

    private func loop() {
        while lock.withLock({ running }) {
            sample()
            usleep(2_000)
        }
    }

    private func sample() {
        let now = ProcessMemory.read()
        let growth = max(now.file - fileBefore, 0)
        lock.withLock {
            phase.peakResident = max(phase.peakResident, now.resident - growth)
            phase.fileGrowth = max(phase.fileGrowth, growth)
        }
    }
}
