/// The hook a ``PersistentContainer`` reports its ``StrataEvent``s to: engine calls with their
/// durations, saves with their row counts, conflicts and retries of units of work, migration
/// progress and history trims. Strata depends on no logging or metrics package; forward the
/// events to yours (`Docs/Instrumentation.md` shows swift-log and swift-metrics).
///
/// ```swift
/// let hook = Instrumentation { event in
///     if case .commit(let commit) = event { print("saved \(commit.inserted) new rows") }
/// }
/// let container = try PersistentContainer(schema: schema, engine: .sqlite(at: url), instrumentation: hook)
/// ```
///
/// Lifetime and threading rule: the hook is given when the container opens and serves it, and
/// every context it makes, for the container's life. It is called **synchronously, after the
/// fact**, on the thread that did the work (a context's queue, the thread that opened the store
/// for migration reports, a cooperative thread for history trims), often from several threads
/// at once, so it must be `Sendable` and thread-safe. It cannot throw (a failure in it is its
/// own to handle) and cannot change what it reports: the save, read or retry has already
/// happened. Whatever time it takes is added to the operation that reported it, so keep it
/// short; hand slow work (I/O, network) to a queue or an `AsyncStream` of your own. It must not
/// wait for the same container's work (a semaphore on a save, say): that work may be what is
/// calling it. Work it starts on the store itself (a `Task` that saves) is reported like any
/// other, so a hook that saves on every commit never stops.
///
/// When no hook is set, instrumentation costs one test of an optional per engine call or read
/// snapshot: no clock is read and no event is built.
public final class Instrumentation: Sendable {
    private let handler: @Sendable (StrataEvent) -> Void

    /// A hook that calls `handler` with every event.
    /// - Parameter handler: called synchronously after each event, from any thread (see the
    ///   type's threading rule).
    public init(_ handler: @escaping @Sendable (StrataEvent) -> Void) {
        self.handler = handler
    }

    /// Reports `event`.
    func emit(_ event: StrataEvent) {
        handler(event)
    }

    /// Runs the engine call `body`, then reports it with its duration, its count (from
    /// `count`) and its error, which is rethrown.
    func timed<T>(
        _ operation: StrataEvent.EngineOperation, entity: String?, count: (T) -> Int? = { _ in nil },
        _ body: () throws -> T
    ) rethrows -> T {
        let start = ContinuousClock.now
        do {
            let result = try body()
            emit(
                .engineCall(
                    .init(
                        operation: operation, entity: entity, startedAt: start, duration: .now - start,
                        count: count(result), error: nil)))
            return result
        } catch {
            emit(
                .engineCall(
                    .init(
                        operation: operation, entity: entity, startedAt: start, duration: .now - start, count: nil,
                        error: error)))
            throw error
        }
    }
}
