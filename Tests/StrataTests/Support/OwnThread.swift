import Foundation

/// Runs a blocking `body` (a connect that may wait for its timeout, `pg_ctl`) on a new thread of
/// its own and returns its result and how long it took: never on a Swift-concurrency thread nor
/// a Dispatch worker, whose few threads the parallel suite shares.
func runOnOwnThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> (T, Duration) {
    await withCheckedContinuation { continuation in
        Thread {
            let started = ContinuousClock.now
            let result = body()
            continuation.resume(returning: (result, ContinuousClock.now - started))
        }.start()
    }
}
