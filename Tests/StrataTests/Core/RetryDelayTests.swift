import Testing

@testable import Strata

/// The retry back-off is computed from numbers the caller gives: no policy and no attempt
/// number may overflow it.
@Suite("retry delay arithmetic")
struct RetryDelayTests {
    @Test("every back-off is between zero and the policy's cap, for extreme policies and attempts")
    func extremes() {
        let durations: [Duration] = [
            .zero, .nanoseconds(1), .microseconds(100), .seconds(Int64.max), .seconds(Int64.max / 1_000_000_000),
            .seconds(-1), .nanoseconds(-1),
        ]
        let attempts = [0, 1, 19, 20, 21, 63, 64, Int.max, -1, Int.min]
        for base in durations {
            for cap in durations {
                let policy = RetryPolicy(maxRetries: Int.max, baseDelay: base, maxDelay: cap)
                let limit = RetryPolicy.nanoseconds(cap)
                for attempt in attempts {
                    let delay = policy.delay(forAttempt: attempt)
                    #expect(delay >= .zero, "base \(base), cap \(cap), attempt \(attempt): \(delay)")
                    #expect(delay <= .nanoseconds(limit), "base \(base), cap \(cap), attempt \(attempt): \(delay)")
                }
            }
        }
    }

    @Test("durations convert to nanoseconds, saturating at Int64.max and clamping negatives to zero")
    func nanoseconds() {
        #expect(RetryPolicy.nanoseconds(.milliseconds(50)) == 50_000_000)
        #expect(RetryPolicy.nanoseconds(.seconds(3) + .nanoseconds(7)) == 3_000_000_007)
        #expect(RetryPolicy.nanoseconds(.seconds(Int64.max)) == Int64.max)
        #expect(RetryPolicy.nanoseconds(.seconds(-2)) == 0)
        #expect(RetryPolicy.nanoseconds(.zero) == 0)
    }
}
