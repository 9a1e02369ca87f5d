/// A ``HistoryStore`` that can signal new commits as they happen (PostgreSQL's LISTEN/NOTIFY),
/// so observers wait for a signal instead of polling ``HistoryStore/currentHistoryToken()``.
///
/// Signals are only hints: a waiter still reads ``HistoryStore/history(after:limit:)`` after one,
/// so a lost, late or duplicated signal costs at most a read or a delay, never a change. Engines
/// without a signal (SQLite, LMDB) do not conform, and their observers poll.
///
/// ```swift
/// if let signalling = engine as? any HistorySignalling {
///     let deadline = ContinuousClock.now + .seconds(1)
///     switch signalling.waitForHistory(after: lastSeen, until: deadline) {
///     case true?: print("a commit after \(lastSeen) was signalled: read the history")
///     case false?: print("nothing was signalled before the deadline")
///     case nil: print("the signal is down: poll currentHistoryToken() instead")
///     }
/// }
/// ```
public protocol HistorySignalling: HistoryStore {
    /// Blocks the calling thread until a commit with a token after `token` is signalled, the
    /// deadline passes, or the signal is found down. Never call it on a Swift-concurrency
    /// thread: run it on a thread or dispatch queue of your own.
    ///
    /// ```swift
    /// Thread {
    ///     while engine.waitForHistory(after: seen, until: .now + .seconds(1)) == false {}
    ///     // true: read history(after: seen); nil: poll for a while
    /// }.start()
    /// ```
    ///
    /// Does not throw: a failure of the signal (a dropped connection, a closed engine) answers
    /// nil, and the caller polls, where errors surface as usual.
    /// - Returns: true when a commit after `token` was signalled (at once if one already was),
    ///   false when the deadline passed first, nil when the signal is down (poll instead).
    func waitForHistory(after token: Int64, until deadline: ContinuousClock.Instant) -> Bool?
}
