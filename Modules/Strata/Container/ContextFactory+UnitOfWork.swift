import Foundation
import StrataStorage

/// How ``ContextFactory/performUnitOfWork(retries:_:)`` retries conflicts and busy stores.
///
/// ```swift
/// let policy = RetryPolicy(maxRetries: 10, maxDelay: .milliseconds(20))
/// try await container.performUnitOfWork(retries: policy) { context in
///     …
/// }
/// ```
///
/// Every value from 0 up to `Int.max` retries (or the largest `Duration`) is valid: the
/// back-off never overflows. A negative `maxRetries`, `baseDelay` or `maxDelay` is refused by
/// `performUnitOfWork` with ``StrataStorage/StrataError/misuse(_:native:)`` before the body runs.
public struct RetryPolicy: Sendable, Hashable {
    /// How many times a unit of work that failed with a retryable error (`.conflict` or
    /// `.busy`) is re-run after the first attempt.
    public var maxRetries: Int
    /// The first back-off; each retry doubles it, with full jitter.
    public var baseDelay: Duration
    /// The longest back-off.
    public var maxDelay: Duration

    /// A retry policy.
    public init(maxRetries: Int = 50, baseDelay: Duration = .microseconds(100), maxDelay: Duration = .milliseconds(50))
    {
        self.maxRetries = maxRetries
        self.baseDelay = baseDelay
        self.maxDelay = maxDelay
    }

    /// The default: 50 retries, 0.1 ms doubling up to 50 ms, with full jitter.
    public static let standard = RetryPolicy()

    /// No retries: the first error, `.conflict` or `.busy` included, is thrown as it is.
    public static let none = RetryPolicy(maxRetries: 0)

    /// Throws `.misuse` for a negative count or delay.
    func validate() throws(StrataError) {
        if maxRetries < 0 {
            throw .misuse("RetryPolicy.maxRetries is \(maxRetries); it must be 0 or more (0: no retries).")
        }
        if baseDelay < .zero { throw .misuse("RetryPolicy.baseDelay is \(baseDelay); a delay must be zero or more.") }
        if maxDelay < .zero { throw .misuse("RetryPolicy.maxDelay is \(maxDelay); a delay must be zero or more.") }
    }

    /// A random back-off between zero and `min(baseDelay * 2^attempt, maxDelay)`, computed in
    /// saturating whole nanoseconds so that no policy and no attempt number can overflow.
    func delay(forAttempt attempt: Int) -> Duration {
        let exponent = min(max(attempt, 0), 20)
        let base = Self.nanoseconds(baseDelay)
        let scaled = base > Int64.max >> exponent ? Int64.max : base << exponent
        let ceiling = min(scaled, Self.nanoseconds(maxDelay))
        return .nanoseconds(Int64.random(in: 0...max(ceiling, 0)))
    }

    /// A duration in whole nanoseconds, clamped to `0...Int64.max`.
    static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0, attoseconds >= 0 || seconds > 0 else { return 0 }
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return Int64.max }
        let (total, overflowAgain) = whole.addingReportingOverflow(attoseconds / 1_000_000_000)
        return overflowAgain ? Int64.max : max(total, 0)
    }
}

extension ContextFactory {
    /// Runs one whole unit of work in a fresh context, re-running it in another fresh context
    /// when it fails with a retryable error: ``StrataStorage/StrataError/conflict(_:)`` (another operation
    /// saved the same rows first) or ``StrataStorage/StrataError/busy(_:native:)`` (the store stayed locked past the
    /// engine's busy timeout).
    ///
    /// `body` runs inside `perform` of a new context on each attempt; it should do all its
    /// reads and writes and end with `save()`. After a retryable error the attempt's context is
    /// discarded (with its unsaved state) and the work is re-run on fresh data after a jittered
    /// back-off (``RetryPolicy``). Other errors are thrown at once, unchanged, and so is a conflict
    /// on a history cursor moved in the save (``ObjectContext/moveHistoryCursor(past:)``): another
    /// consumer moved it, and re-running the same delivery cannot succeed.
    ///
    /// On a ``PersistentContainer``, a unit of work that lost twice runs its next attempt alone
    /// among the container's units of work: it waits for the attempts already running, holds new
    /// ones back, and runs with none beside it, so within one process a unit of work conflicts at
    /// most twice. No wait at that gate lasts longer than the policy's `maxDelay`; after it the
    /// attempt runs beside the others.
    ///
    /// ```swift
    /// try await container.performUnitOfWork { context in
    ///     let from = try context.existingObject(with: fromID, as: Account.self)
    ///     let to = try context.existingObject(with: toID, as: Account.self)
    ///     from.balance -= 100
    ///     to.balance += 100
    ///     try context.save()
    /// }
    /// ```
    /// - Parameters:
    ///   - retries: the retry policy (default ``RetryPolicy/standard``: 50 retries).
    ///   - body: the unit of work; objects stay inside it, only its `Sendable` result leaves.
    /// - Throws: ``StrataStorage/StrataError/retriesExhausted(attempts:errors:)`` when every attempt failed
    ///   with a retryable error and the policy allows no more (it lists each attempt's error);
    ///   with ``RetryPolicy/none`` the first error itself. Any other error `body` throws,
    ///   unchanged, and a retryable one thrown after the body's save committed (running the body
    ///   again would apply its saved work twice); `.misuse` for a policy with a negative value;
    ///   `CancellationError` when the task is cancelled (also during a back-off).
    @discardableResult
    public func performUnitOfWork<T: Sendable>(
        retries: RetryPolicy = .standard, _ body: @escaping @Sendable (ObjectContext) throws -> T
    ) async throws -> T {
        try retries.validate()
        var failures: [StrataError] = []
        while true {
            let context = newBackgroundContext()
            // A unit of work that lost twice re-runs alone (after the attempts running now), so no
            // unit of work of this container races it a third time; the gate is left before any
            // back-off. (Going alone after the first loss cost throughput: Docs/Concurrency.md.)
            let gate = context.unitOfWorkGate
            let bound = Duration.nanoseconds(RetryPolicy.nanoseconds(retries.maxDelay))
            let ticket = await gate?.enter(alone: failures.count >= 2, bound: bound)
            let attempt: Result<T, any Error>
            do {
                attempt = .success(try await context.perform { try body(context) })
            } catch {
                attempt = .failure(error)
            }
            if let gate, let ticket { gate.leave(ticket) }
            do {
                return try attempt.get()
            } catch let error as StrataError where error.isRetryable && context.committedSaves == 0 {
                // (`committedSaves` is read after the body's perform returned: no body runs now.
                // A body that committed a save and then threw is not run again, which would
                // apply its saved work twice: its error is thrown as it is.)
                let hook = context.instrumentation
                failures.append(error)
                if case .conflict(let conflicts) = error {
                    RetryStatistics.report(.conflict(attempt: failures.count, conflicts: conflicts), to: hook)
                }
                guard failures.count <= retries.maxRetries else {
                    RetryStatistics.report(.retriesExhausted(attempts: failures.count, errors: failures), to: hook)
                    if retries.maxRetries == 0 { throw error }
                    throw StrataError.retriesExhausted(attempts: failures.count, errors: failures)
                }
                let delay = retries.delay(forAttempt: failures.count - 1)
                try await Task.sleep(for: delay)
                RetryStatistics.report(.retry(attempt: failures.count + 1, delay: delay, after: error), to: hook)
            }
        }
    }
}

extension StrataError {
    /// Whether re-running the unit of work in a fresh context may succeed: `.conflict` and `.busy`,
    /// except a conflict on a history cursor (``StrataStorage/VersionConflict/historyCursor``): the
    /// cursor moved away from where the consumer read it, and re-running the same delivery cannot
    /// change that.
    var isRetryable: Bool {
        switch self {
        case .conflict(let conflicts): !conflicts.contains { $0.historyCursor != nil }
        case .busy: true
        default: false
        }
    }
}
