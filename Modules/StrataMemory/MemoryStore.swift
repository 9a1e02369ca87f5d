import Foundation
import StrataStorage
import Synchronization

/// One named in-memory store of this process: its state under a lock, a second lock that makes
/// its writers take turns, and the signal its commits give to observers waiting on any engine
/// of the store.
///
/// The state lock is held only to take the state or to put a new one in its place, so a reader
/// never waits for a commit's work; a writer holds ``writer`` while it builds the next state
/// from the current one, so writes never race each other and none is ever redone.
final class MemoryStore: Sendable {
    /// The name containers open it by.
    let name: String
    /// The state; nil until the first engine creates the store.
    let state = Mutex<MemoryState?>(nil)
    /// Held by a writer (a commit, a key allocation, a cursor move, an open that creates or
    /// migrates the store) from taking the state until its successor is in place. A lock that
    /// sleeps instead of spinning: a writer can wait for a whole commit.
    let writer = NSLock()
    /// Wakes observers when a commit appends history.
    let signal = MemorySignal()
    /// The thread of the open that holds ``writer`` while it creates or migrates the store (see
    /// ``lockForOpen()``).
    private let opener = Mutex<ObjectIdentifier?>(nil)
    /// How long an open waits for another open's migration, or a writer, to finish.
    static let openWait: TimeInterval = 5

    /// An empty store named `name`.
    init(name: String) {
        self.name = name
    }

    /// Takes ``writer`` for an open, which may create or migrate the store.
    ///
    /// An open made from inside another open's migration on the same thread (a custom stage that
    /// opens the store it migrates) is refused at once: it would wait for itself. Any other open
    /// waits for the writer's turn at most ``openWait``, as a durable engine's open waits for its
    /// lock at most its busy timeout.
    /// - Throws: `.busy`, with nothing changed, in both cases.
    func lockForOpen() throws(StrataError) {
        let thread = ObjectIdentifier(Thread.current)
        if opener.withLock({ $0 == thread }) {
            throw .busy(
                """
                the in-memory store \(String(reflecting: name)) is being opened, and migrated, by a container on \
                this thread: a migration stage cannot open the store it migrates; use the stage's own engine
                """)
        }
        guard writer.lock(before: Date(timeIntervalSinceNow: Self.openWait)) else {
            throw .busy(
                """
                the in-memory store \(String(reflecting: name)) stayed busy for \(Int(Self.openWait)) s (another \
                container's open or commit held it); nothing was changed: open it again
                """)
        }
        opener.withLock { $0 = thread }
    }

    /// Gives back what ``lockForOpen()`` took.
    func unlockAfterOpen() {
        opener.withLock { $0 = nil }
        writer.unlock()
    }
}

/// The process's in-memory stores by name. A store lives while at least one engine opened on it
/// is neither closed nor released: the last one to go takes the store with it.
enum MemoryRegistry {
    private struct Entry {
        let store: MemoryStore
        var engines: Int
    }

    private static let stores = Mutex<[String: Entry]>([:])

    /// The store named `name` (made empty when there is none), counted as used by one more engine.
    static func acquire(_ name: String) -> MemoryStore {
        stores.withLock { stores in
            if var entry = stores[name] {
                entry.engines += 1
                stores[name] = entry
                return entry.store
            }
            let store = MemoryStore(name: name)
            stores[name] = Entry(store: store, engines: 1)
            return store
        }
    }

    /// One engine of `store` is done with it; the store goes when none is left.
    static func release(_ store: MemoryStore) {
        stores.withLock { stores in
            guard var entry = stores[store.name], entry.store === store else { return }
            entry.engines -= 1
            stores[store.name] = entry.engines > 0 ? entry : nil
        }
    }
}

/// The history signal of one store (``StrataStorage/HistorySignalling``): the last token committed,
/// and a condition that waiting observers sleep on.
final class MemorySignal: Sendable {
    private let condition = NSCondition()
    private let token = Atomic<Int64>(0)

    /// A commit appended history up to `token` (called in commit order).
    func committed(_ token: Int64) {
        self.token.store(token, ordering: .releasing)
        wakeAll()
    }

    /// Wakes every waiter, to look again (an engine closed, say).
    func wakeAll() {
        condition.lock()
        condition.broadcast()
        condition.unlock()
    }

    /// Waits until a token after `after` is committed (true), the deadline passes (false), or
    /// `stopped` answers true (nil).
    func wait(after: Int64, until deadline: ContinuousClock.Instant, stopped: () -> Bool) -> Bool? {
        condition.lock()
        defer { condition.unlock() }
        while true {
            if stopped() { return nil }
            if token.load(ordering: .acquiring) > after { return true }
            let remaining = ContinuousClock.now.duration(to: deadline)
            if remaining <= .zero { return false }
            let seconds = Double(remaining.components.seconds) + Double(remaining.components.attoseconds) / 1e18
            _ = condition.wait(until: Date(timeIntervalSinceNow: seconds))
        }
    }
}
