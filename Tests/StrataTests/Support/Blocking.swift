import Foundation

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

    /// Waits for `process` to exit, off the test's thread.
    static func waitForExit(_ process: Process) async {
        _ = try? await run { process.waitUntilExit() }
    }
}
