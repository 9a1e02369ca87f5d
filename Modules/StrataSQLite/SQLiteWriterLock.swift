import Dispatch

/// Hands the engine's single writer connection to one write at a time, like a `Mutex`, except
/// that a write waits for its turn only until its busy timeout runs out.
///
/// Taking a free lock is one atomic decrement of a `DispatchSemaphore` and reads no clock; the
/// clock is read only when the lock is taken and the caller has to wait.
final class SQLiteWriterLock: @unchecked Sendable {
    private let turn = DispatchSemaphore(value: 1)
    /// "Now" for `DispatchSemaphore.wait`: a free lock is taken without reading the clock.
    private static let now = DispatchTime(uptimeNanoseconds: 0)
    /// The writer connection; nil once closed. Guarded by `turn`.
    private var connection: SQLiteConnection?

    init(_ connection: SQLiteConnection) {
        self.connection = connection
    }

    /// Runs `body` with the connection (nil after ``close()``) once the lock is free, waiting at
    /// most `timeout` nanoseconds from this call.
    ///
    /// `body` also gets what is left of `timeout` (all of it when the lock was free), so that a
    /// wait inside it (SQLite's busy handler) can end at the same deadline.
    /// - Throws: what `timedOut` returns, without running `body`, when `timeout` passed while
    ///   earlier writes held the lock; what `body` throws.
    func withConnection<T, E: Error>(
        waitingAtMost timeout: UInt64, timedOut: () -> E,
        _ body: (SQLiteConnection?, _ remaining: UInt64) throws(E) -> T
    ) throws(E) -> T {
        var remaining = timeout
        if turn.wait(timeout: Self.now) == .timedOut {
            let start = DispatchTime.now().uptimeNanoseconds
            let deadline = DispatchTime(uptimeNanoseconds: start) + .nanoseconds(Int(clamping: timeout))
            if turn.wait(timeout: deadline) == .timedOut { throw timedOut() }
            let waited = DispatchTime.now().uptimeNanoseconds &- start
            remaining = timeout > waited ? timeout - waited : 0
        }
        defer { turn.signal() }
        return try body(connection, remaining)
    }

    /// Takes the connection out, waiting without bound for a write under way, and returns it;
    /// later writes get nil.
    func close() -> SQLiteConnection? {
        turn.wait()
        defer { turn.signal() }
        let taken = connection
        connection = nil
        return taken
    }
}
