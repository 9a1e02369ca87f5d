import Synchronization

/// Counters of retry handling by ``ContextFactory/performUnitOfWork(retries:_:)``:
/// process-wide, or for one piece of work and every task it starts. `conflicts` counts save
/// conflicts; `retries` and `exhausted` count every retryable failure (`.conflict` or `.busy`).
///
/// ```swift
/// let (_, counts) = try await RetryStatistics.observing {
///     try await runTransfers()
/// }
/// print(counts.conflicts, counts.retries, counts.exhausted)
/// ```
public enum RetryStatistics {
    /// Counter values at one moment.
    public struct Snapshot: Sendable, Hashable {
        /// Save conflicts seen.
        public var conflicts: Int
        /// Units of work re-run after a conflict or a busy store.
        public var retries: Int
        /// Units of work that ran out of retries.
        public var exhausted: Int
    }

    /// A set of counters.
    final class Counters: Sendable {
        let conflicts = Atomic<Int>(0)
        let retries = Atomic<Int>(0)
        let exhausted = Atomic<Int>(0)

        var snapshot: Snapshot {
            Snapshot(
                conflicts: conflicts.load(ordering: .relaxed), retries: retries.load(ordering: .relaxed),
                exhausted: exhausted.load(ordering: .relaxed))
        }
    }

    private static let global = Counters()
    @TaskLocal private static var scope: Counters?

    /// The process-wide counters.
    public static func snapshot() -> Snapshot { global.snapshot }

    /// Runs `body` and returns its result with the counts of the conflict handling it (and every
    /// child task it starts) caused, unaffected by other work running at the same time.
    public static func observing<T: Sendable>(
        _ body: () async throws -> T
    ) async rethrows -> (result: T, counts: Snapshot) {
        let counters = Counters()
        let result = try await $scope.withValue(counters) { try await body() }
        return (result, counters.snapshot)
    }

    static func recordConflict() {
        for counters in [global, scope].compactMap({ $0 }) { counters.conflicts.add(1, ordering: .relaxed) }
    }

    static func recordRetry() {
        for counters in [global, scope].compactMap({ $0 }) { counters.retries.add(1, ordering: .relaxed) }
    }

    static func recordExhausted() {
        for counters in [global, scope].compactMap({ $0 }) { counters.exhausted.add(1, ordering: .relaxed) }
    }
}
