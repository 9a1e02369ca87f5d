import Synchronization

/// Process-wide counters of conflict handling by ``ContextFactory/performUnitOfWork(retries:_:)``.
///
/// ```swift
/// let before = RetryStatistics.snapshot()
/// // … run work …
/// let retried = RetryStatistics.snapshot().retries - before.retries
/// ```
public enum RetryStatistics {
    /// Counter values at one moment.
    public struct Snapshot: Sendable, Hashable {
        /// Save conflicts seen.
        public var conflicts: Int
        /// Units of work re-run after a conflict.
        public var retries: Int
        /// Units of work that ran out of retries.
        public var exhausted: Int
    }

    private static let conflicts = Atomic<Int>(0)
    private static let retries = Atomic<Int>(0)
    private static let exhausted = Atomic<Int>(0)

    /// The current counters.
    public static func snapshot() -> Snapshot {
        Snapshot(
            conflicts: conflicts.load(ordering: .relaxed), retries: retries.load(ordering: .relaxed),
            exhausted: exhausted.load(ordering: .relaxed))
    }

    static func recordConflict() { conflicts.add(1, ordering: .relaxed) }
    static func recordRetry() { retries.add(1, ordering: .relaxed) }
    static func recordExhausted() { exhausted.add(1, ordering: .relaxed) }
}
