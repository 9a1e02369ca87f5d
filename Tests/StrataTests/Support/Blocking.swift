import Foundation
import StrataTestSupport
import Synchronization

/// Blocking work of a test — reading a child process's pipe, waiting for it to exit — run on a
/// thread of its own instead of the test's task.
///
/// Swift concurrency runs every test on a pool with one thread per core (two on CI). A test
/// that blocks one of them for a child process's whole run (a benchmark, a migrating `ledger`)
/// halves the pool for the rest of the suite; two such tests at once stop every other test
/// until they end, and tests that wait for something with a deadline then fail. So the tests
/// that talk to child processes do the blocking part here.
enum Blocking {
    /// Runs `body` on a new thread and returns what it returns (or throws what it throws).
    static func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try body() }) }.start()
        }
    }

    /// How ``awaitTask(timeout:_:)`` ended.
    enum TaskOutcome {
        case finished
        case failed(any Error)
        case timedOut
    }

    /// Runs `body` in a task and blocks the calling thread until it ends, or until `timeout`
    /// passes (nil: no limit). For code that must wait synchronously inside a `perform` body, on
    /// its context's queue, for async work on the same store.
    static func awaitTask(
        timeout: DispatchTimeInterval? = nil, _ body: @escaping @Sendable () async throws -> Void
    ) -> TaskOutcome {
        let done = DispatchSemaphore(value: 0)
        let failure = Mutex<(any Error)?>(nil)
        Task {
            do { try await body() } catch { failure.withLock { $0 = error } }
            done.signal()
        }
        if let timeout {
            if done.wait(timeout: .now() + timeout) == .timedOut { return .timedOut }
        } else {
            done.wait()
        }
        return failure.withLock { $0 }.map { .failed($0) } ?? .finished
    }

    /// Waits for `process` to exit, off the test's thread.
    static func waitForExit(_ process: SpawnedProcess) async {
        _ = try? await run { process.waitUntilExit() }
    }
}
