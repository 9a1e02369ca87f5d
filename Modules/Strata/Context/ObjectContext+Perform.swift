import Dispatch
import StrataStorage
import Synchronization

extension ObjectContext {
    /// Runs `body` on the context's own serial queue — never on the main actor — and returns
    /// its result. The caller suspends until `body` finishes.
    ///
    /// Inside `body` you may use the context and its objects; every read sees one consistent
    /// snapshot of the store (refreshed after a successful ``save()``). The result must be
    /// `Sendable`, so objects cannot escape: return IDs or value types.
    ///
    /// ```swift
    /// let names = try await context.perform {
    ///     try context.fetch(FetchRequest<Account>()).map(\.name)
    /// }
    /// ```
    ///
    /// Cancellation: when the calling task is cancelled before `body` starts, `body` does not
    /// run and `perform` throws `CancellationError`. Once `body` runs it is not interrupted;
    /// it can ask ``isCancelled`` or call ``checkCancellation()``, and a ``save()`` that starts
    /// after the cancellation throws `CancellationError` and writes nothing. A save already
    /// under way completes.
    ///
    /// Blocking: a `body` must not wait (with a semaphore, a lock, a blocking call) for another
    /// `perform` of the same context — the context's queue is busy running `body`, so the wait
    /// would never end. Such a `perform`, started from a task created inside `body` (also
    /// through bodies of other contexts), throws `.misuse` instead of deadlocking once `body`
    /// has still not returned after ``blockedPerformGrace``. Strata cannot tell a body that waits
    /// from one that is merely slow: a body that runs longer than the grace period must not start
    /// tasks that call `perform` on its own context (use another context, or `Task.detached`).
    /// A body that returns sooner may (fire and forget): the call runs once it returns.
    ///
    /// - Throws: whatever `body` throws, or, when a relationship could not be loaded during `body`
    ///   (a damaged row, a lost connection: the read answered empty), that load's error, even if
    ///   `body` returned; `CancellationError` when the task was cancelled before
    ///   `body` started; ``StrataStorage/StrataError/misuse(_:native:)`` when called from a task started inside a
    ///   `body` of this same context that is still running after ``blockedPerformGrace``.
    @inlinable
    public func perform<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        // Only this generic shell is inlined into callers, so that the continuation and result
        // types are specialized there; the scheduling is `schedule(_:_:)`, written once.
        let token = try beginPerform()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
                schedule(token) { start in
                    switch start {
                    case .run: continuation.resume(with: Result { try self.runConfined(body, token: token) })
                    case .fail(let error): continuation.resume(throwing: error)
                    }
                }
            }
        } onCancel: {
            token.cancel()
        }
    }

    /// How long a `perform` called from inside a still-running body of the same context waits
    /// for that body to return before it throws `.misuse` (the body is then presumed to be
    /// waiting for it): 2 seconds.
    public static let blockedPerformGrace: Duration = .seconds(2)

    /// Checks cancellation and makes the call's token, noting the body it is called from.
    @usableFromInline
    func beginPerform() throws -> PerformToken {
        try Task.checkCancellation()
        return PerformToken(link: link, outer: PerformScope.innermost)
    }

    /// Queues the call on the context's queue; `start` runs there (or, for a call blocked by a
    /// body of the same context that outlives the grace period, on a global queue) exactly once.
    @usableFromInline
    func schedule(_ token: PerformToken, _ start: @escaping @Sendable (PerformStart) -> Void) {
        if let blocking = token.blockingBody {
            let (seconds, attoseconds) = Self.blockedPerformGrace.components
            let grace = DispatchTimeInterval.milliseconds(
                Int(seconds) * 1000 + Int(attoseconds / 1_000_000_000_000_000))
            // Weak: a context whose call already ran may go (its queued block held it until then).
            DispatchQueue.global().asyncAfter(deadline: .now() + grace) { [weak self] in
                guard let self else { return }
                if blocking.isRunning, token.claim() { start(.fail(self.blockedPerform(blocking))) }
            }
        }
        queue.async {
            guard token.claim() else { return }
            start(token.isCancelled ? .fail(CancellationError()) : .run)
        }
    }

    /// Runs a claimed call's body on the context's queue, inside the body's confinement and scope.
    @usableFromInline
    func runConfined<T>(_ body: () throws -> T, token: PerformToken) throws -> T {
        link.ownerThread.store(CurrentThread.id, ordering: .relaxed)
        currentPerform = token
        token.begin()
        defer {
            token.end()
            currentPerform = nil
            endSnapshot()
            link.ownerThread.store(0, ordering: .relaxed)
        }
        let failedBefore = failedLoad != nil
        let result: T
        do {
            result = try PerformScope.binding(token) { try body() }
        } catch {
            // A relationship that could not be loaded in this body is the cause of what followed.
            if !failedBefore { try throwFailedLoad() }
            throw error
        }
        if !failedBefore { try throwFailedLoad() }
        return result
    }

    private func blockedPerform(_ token: PerformToken) -> StrataError {
        .misuse(
            """
            ObjectContext.perform(_:) of context \(name ?? "(unnamed)") was called from a task started inside a \
            perform body of the same context, and that body was still running after \(Self.blockedPerformGrace): \
            it is presumed to be waiting for this call, which can only run after it returns (the context runs one \
            body at a time). Do the work directly in the running body, or use another context.
            """
        )
    }

    /// Whether the task that called the running ``perform(_:)`` has been cancelled.
    ///
    /// Long work inside `perform` can check it between steps and stop early; ``save()`` checks
    /// it itself. Call inside `perform`.
    ///
    /// ```swift
    /// try await context.perform {
    ///     for id in ids {
    ///         if context.isCancelled { break }
    ///         try context.existingObject(with: id).setValue(…)
    ///     }
    ///     try context.save()     // throws CancellationError if cancelled meanwhile
    /// }
    /// ```
    public var isCancelled: Bool {
        requireInside("ObjectContext.isCancelled")
        return currentPerform?.isCancelled ?? false
    }

    /// Throws `CancellationError` when the task that called the running ``perform(_:)`` has been
    /// cancelled. Call inside `perform`.
    ///
    /// ```swift
    /// try await context.perform {
    ///     for batch in batches {
    ///         try context.checkCancellation()
    ///         import(batch, into: context)
    ///     }
    ///     try context.save()
    /// }
    /// ```
    /// - Throws: `CancellationError` after cancellation;
    ///   ``StrataStorage/StrataError/misuse(_:native:)`` outside `perform`.
    public func checkCancellation() throws {
        try checkInside("ObjectContext.checkCancellation()")
        if currentPerform?.isCancelled == true { throw CancellationError() }
    }
}
