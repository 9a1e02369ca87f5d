import Dispatch
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
    /// would never end. Such a `perform`, started from a task created inside `body`, throws
    /// `.misuse` at once instead of deadlocking.
    ///
    /// - Throws: whatever `body` throws; `CancellationError` when the task was cancelled before
    ///   `body` started; ``StrataError/misuse(_:)`` when called from a task started inside a
    ///   running `body` of this same context.
    public func perform<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        if let blocking = PerformScope.running(in: link) { throw blockedPerform(blocking) }
        try Task.checkCancellation()
        let token = PerformToken(link: link)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
                queue.async {
                    if token.isCancelled {
                        continuation.resume(throwing: CancellationError())
                        return
                    }
                    continuation.resume(with: Result { try self.runConfined(body, token: token) })
                }
            }
        } onCancel: {
            token.cancel()
        }
    }

    private func runConfined<T>(_ body: () throws -> T, token: PerformToken) throws -> T {
        link.ownerThread.store(CurrentThread.id, ordering: .relaxed)
        currentPerform = token
        token.begin()
        defer {
            token.end()
            currentPerform = nil
            endSnapshot()
            link.ownerThread.store(0, ordering: .relaxed)
        }
        return try PerformScope.binding(token) { try body() }
    }

    private func blockedPerform(_ token: PerformToken) -> StrataError {
        .misuse("ObjectContext.perform(_:) of context \(name ?? "(unnamed)") was called from a task started inside a perform body of the same context that is still running. If that body waits for this call, both wait forever: the context runs one body at a time. Do the work directly in the running body, or use another context.")
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
    /// - Throws: `CancellationError` after cancellation; ``StrataError/misuse(_:)`` outside `perform`.
    public func checkCancellation() throws {
        try checkInside("ObjectContext.checkCancellation()")
        if currentPerform?.isCancelled == true { throw CancellationError() }
    }
}
