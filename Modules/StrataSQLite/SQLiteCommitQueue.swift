import Foundation
import StrataStorage

/// Commits of this process waiting for the store's writer connection, so that the commit that
/// gets it next also commits the ones queued behind it, in the same transaction (group commit:
/// one sync to disk for all of them instead of one each).
///
/// A commit joins the queue before it waits for the writer connection and leaves it when it
/// gives up waiting (its busy timeout); the commit that holds the connection and has begun its
/// transaction takes every queued commit at once, so a commit either runs in exactly one
/// transaction or gives up having written nothing.
final class SQLiteCommitQueue: @unchecked Sendable {
    /// One commit: its changes, and once it ran, its result.
    final class Request: @unchecked Sendable {
        let changes: ChangeSet
        /// Set by the commit that ran it, before that one leaves the writer connection and
        /// signals `done`; read after either.
        var result: Result<[SetWriteResult], StrataError>?
        /// Signalled once `result` is set.
        let done = DispatchSemaphore(value: 0)

        init(_ changes: ChangeSet) {
            self.changes = changes
        }

        /// Records how the commit ended and wakes its caller.
        func finish(_ result: Result<[SetWriteResult], StrataError>) {
            self.result = result
            done.signal()
        }
    }

    /// The most commits one transaction takes.
    static let groupLimit = 64

    private let lock = NSLock()
    /// Queued commits in arrival order; guarded by `lock`.
    private var waiting: [Request] = []

    /// Queues `request` before its caller waits for the writer connection.
    func join(_ request: Request) {
        lock.lock()
        waiting.append(request)
        lock.unlock()
    }

    /// Takes `request` out of the queue: false when a running transaction has already taken it
    /// (its result will come).
    func leave(_ request: Request) -> Bool {
        lock.lock()
        defer { lock.unlock() }
        guard let index = waiting.firstIndex(where: { $0 === request }) else { return false }
        waiting.remove(at: index)
        return true
    }

    /// Takes `first` and the commits queued with it (at most ``groupLimit``), `first` first.
    func take(with first: Request) -> [Request] {
        lock.lock()
        defer { lock.unlock() }
        waiting.removeAll { $0 === first }
        let others = waiting.prefix(Self.groupLimit - 1)
        waiting.removeFirst(others.count)
        return [first] + others
    }
}
