import Foundation

/// Nanoseconds of the chosen clock: wall time (monotonic) by default, or the CPU time of the
/// whole process (every thread), which other load on the machine disturbs much less.
enum Clock {
    /// Set once from the command line, before any measurement.
    nonisolated(unsafe) static var source = ClockSource.wall

    @inline(__always)
    static func now() -> UInt64 {
        var spec = timespec()
        clock_gettime(source == .wall ? CLOCK_MONOTONIC : CLOCK_PROCESS_CPUTIME_ID, &spec)
        return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
    }

    /// Runs `body` and returns its result with the elapsed nanoseconds.
    @inline(__always)
    static func time<T>(_ body: () async throws -> T) async rethrows -> (nanoseconds: UInt64, value: T) {
        let start = now()
        let value = try await body()
        return (now() - start, value)
    }
}

/// What ``Clock`` measures.
enum ClockSource: String, Codable, Sendable {
    case wall
    case cpu
}

/// The timed samples of one side (Strata or its baseline) of one workload.
struct Samples: Codable, Sendable {
    /// Nanoseconds per timed repetition (warm-up excluded).
    var nanoseconds: [UInt64] = []

    var median: Double {
        let sorted = nanoseconds.sorted()
        guard !sorted.isEmpty else { return .nan }
        let middle = sorted.count / 2
        return sorted.count % 2 == 1
            ? Double(sorted[middle]) : (Double(sorted[middle - 1]) + Double(sorted[middle])) / 2
    }
}

/// Runs a pair of measurements, interleaved: one warm-up of each, then `repetitions` rounds of
/// (Strata, baseline), so drift on the machine affects both sides alike.
///
/// Each closure returns the nanoseconds of its timed part and a checksum; the checksums of the
/// two sides must agree on every run.
func measurePair(
    _ label: String, repetitions: Int,
    strata: () async throws -> (UInt64, Checksum?),
    baseline: () async throws -> (UInt64, Checksum?)
) async throws -> (strata: Samples, baseline: Samples) {
    var strataSamples = Samples()
    var baselineSamples = Samples()
    for round in 0...repetitions {
        let (strataTime, strataSum) = try await strata()
        let (baselineTime, baselineSum) = try await baseline()
        if let strataSum, let baselineSum, strataSum != baselineSum {
            throw BenchmarkError.mismatch("\(label): Strata read \(strataSum); the baseline read \(baselineSum)")
        }
        if round > 0 {
            strataSamples.nanoseconds.append(strataTime)
            baselineSamples.nanoseconds.append(baselineTime)
        }
    }
    return (strataSamples, baselineSamples)
}
