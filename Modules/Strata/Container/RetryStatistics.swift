import Synchronization

/// Counters of retry handling by ``ContextFactory/performUnitOfWork(retries:_:)``:
/// process-wide, or for one piece of work and every task it starts. `conflicts` counts save
/// conflicts; `retries` and `exhausted` count every retryable failure (`.conflict` or `.busy`).
///
/// The counters are kept from the same ``StrataEvent``s a container's ``Instrumentation`` hook
/// receives (`.conflict`, `.retry`, `.retriesExhausted`), always, with or without a hook: use
/// them for totals, and the hook for each event as it happens (with its attempt, delay and error).
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

        /// Adds a unit of work's event to its counter.
        func count(_ event: StrataEvent) {
            switch event {
            case .conflict: conflicts.add(1, ordering: .relaxed)
            case .retry: retries.add(1, ordering: .relaxed)
            case .retriesExhausted: exhausted.add(1, ordering: .relaxed)
            default: break
            }
        }

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

    /// Counts a unit of work's event (``StrataEvent/conflict(attempt:conflicts:)``,
    /// ``StrataEvent/retry(attempt:delay:after:)`` or ``StrataEvent/retriesExhausted(attempts:errors:)``),
    /// then hands it to the container's hook, if any: these counters are one consumer of the
    /// events, always on, and the hook another.
    static func report(_ event: StrataEvent, to hook: Instrumentation?) {
        for counters in [global, scope].compactMap({ $0 }) { counters.count(event) }
        hook?.emit(event)
    }
}
