import Foundation

/// How ``ContextFactory/performUnitOfWork(retries:_:)`` retries conflicts.
public struct RetryPolicy: Sendable, Hashable {
    /// How many times a conflicting unit of work is re-run after the first attempt.
    public var maxRetries: Int
    /// The first back-off; each retry doubles it, with full jitter.
    public var baseDelay: Duration
    /// The longest back-off.
    public var maxDelay: Duration

    /// A retry policy.
    public init(maxRetries: Int = 50, baseDelay: Duration = .microseconds(100), maxDelay: Duration = .milliseconds(50)) {
        self.maxRetries = maxRetries
        self.baseDelay = baseDelay
        self.maxDelay = maxDelay
    }

    /// The default: 50 retries, 0.1 ms doubling up to 50 ms, with full jitter.
    public static let standard = RetryPolicy()

    /// No retries: a conflict is thrown at once.
    public static let none = RetryPolicy(maxRetries: 0)

    func delay(forAttempt attempt: Int) -> Duration {
        let exponent = min(attempt, 20)
        let ceiling = min(baseDelay * (1 << exponent), maxDelay)
        let nanoseconds = ceiling.components.seconds * 1_000_000_000 + ceiling.components.attoseconds / 1_000_000_000
        return .nanoseconds(Int64.random(in: 0...max(nanoseconds, 0)))
    }
}

extension ContextFactory {
    /// Runs one whole unit of work in a fresh context, re-running it in another fresh context
    /// when the save hits a ``StrataError/conflict(_:)``.
    ///
    /// `body` runs inside `perform` of a new context on each attempt; it should do all its
    /// reads and writes and end with `save()`. A conflict means another operation saved the same
    /// rows first: the attempt's context is discarded (with its unsaved state) and the work is
    /// re-run on fresh data after a jittered back-off. Other errors are thrown at once.
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
    ///   - retries: the retry policy (default ``RetryPolicy/standard``).
    ///   - body: the unit of work; objects stay inside it, only its `Sendable` result leaves.
    /// - Throws: the last ``StrataError/conflict(_:)`` when retries run out, or any other error
    ///   `body` throws.
    @discardableResult
    public func performUnitOfWork<T: Sendable>(
        retries: RetryPolicy = .standard, _ body: @escaping @Sendable (ObjectContext) throws -> T
    ) async throws -> T {
        var attempt = 0
        while true {
            let context = newBackgroundContext()
            do {
                return try await context.perform { try body(context) }
            } catch StrataError.conflict(let conflicts) {
                RetryStatistics.recordConflict()
                guard attempt < retries.maxRetries else {
                    RetryStatistics.recordExhausted()
                    throw StrataError.conflict(conflicts)
                }
                try await Task.sleep(for: retries.delay(forAttempt: attempt))
                attempt += 1
                RetryStatistics.recordRetry()
            }
        }
    }
}
