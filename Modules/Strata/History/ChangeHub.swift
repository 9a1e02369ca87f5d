import Foundation
import StrataStorage
import Synchronization

/// A container's watch on its store's history: tells waiting observers when a commit with a
/// token past theirs exists, from this process or another.
///
/// Two sources wake observers. Saves of the container's own contexts call ``didCommit()``,
/// which reads the store's token at once (in-process delivery without a polling delay). A
/// polling task, running only while an observer exists, reads the token every ``pollInterval``,
/// which catches commits of other containers and other processes. Observers then read the
/// history after their own position, so a wake-up that finds nothing new costs one read.
///
/// When the engine signals commits (``HistorySignalling``, PostgreSQL's LISTEN/NOTIFY), a thread
/// of the hub's own waits on the signal instead, and reads the token when it fires, or every
/// ``fallbackPollInterval`` in case a signal was lost; while the signal is down it polls every
/// ``pollInterval`` as above. Signals are only hints: the token is still read after each one.
final class ChangeHub: Sendable {
    /// How often the store's token is read while someone observes (and the engine's signal, if
    /// it has one, is down).
    static let pollInterval: Duration = .milliseconds(5)

    /// How often the token is read anyway while the engine's signal is up (a knob for tests,
    /// which make it long to show that delivery comes from the signal).
    static let fallbackPollInterval = Mutex<Duration>(.seconds(1))

    let engine: any HistoryStore
    /// The container's event hook, for the history reads and trims made through this hub.
    let instrumentation: Instrumentation?
    private let state = Mutex(State())

    private struct Waiter {
        let position: Int64
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var knownToken: Int64 = 0
        var waiters: [UInt64: Waiter] = [:]
        var nextWaiter: UInt64 = 0
        var subscribers = 0
        var polling = false
    }

    init(engine: any HistoryStore, instrumentation: Instrumentation? = nil) {
        self.engine = engine
        self.instrumentation = instrumentation
    }

    /// A save of this container committed: wake observers now (only costs a read while one is
    /// registered). Registered, not only waiting: an observer that found nothing new and is about
    /// to wait must learn of this commit too, or it would wait for the next poll.
    func didCommit() {
        guard state.withLock({ $0.subscribers > 0 }) else { return }
        poll()
    }

    /// Registers an observer: the polling task runs while at least one is registered.
    func subscribe() {
        let start = state.withLock { state in
            state.subscribers += 1
            if state.polling { return false }
            state.polling = true
            return true
        }
        guard start else { return }
        if let signalling = engine as? any HistorySignalling {
            // It blocks on the signal: a thread of its own, never a Swift-concurrency thread.
            let thread = Thread { [self] in waitWhileObserved(signalling) }
            thread.name = "strata.history.signal"
            thread.start()
        } else {
            Task.detached { [self] in await pollWhileObserved() }
        }
    }

    /// Unregisters an observer (its iterator went away).
    func unsubscribe() {
        state.withLock { $0.subscribers -= 1 }
    }

    /// Returns once a commit with a token greater than `position` may exist (at once if one is
    /// already known); throws `CancellationError` when the task is cancelled, and the store's
    /// error when reading its token fails.
    func waitForCommit(after position: Int64) async throws {
        let id = state.withLock { state in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let immediate: Result<Void, any Error>? = state.withLock { state in
                    if Task.isCancelled { return .failure(CancellationError()) }
                    if state.knownToken > position { return .success(()) }
                    state.waiters[id] = Waiter(position: position, continuation: continuation)
                    return nil
                }
                if let immediate { continuation.resume(with: immediate) }
            }
        } onCancel: {
            let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
            waiter?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Reads the store's token and wakes the observers it is past. A `.busy` store is tried again
    /// at the next poll; any other failure ends every waiting observer with that error.
    private func poll() {
        let token: Int64
        do {
            token = try engine.currentHistoryToken()
        } catch StrataError.busy {
            return
        } catch {
            let waiters = state.withLock { state in
                defer { state.waiters = [:] }
                return Array(state.waiters.values)
            }
            for waiter in waiters { waiter.continuation.resume(throwing: error) }
            return
        }
        let ready = state.withLock { state -> [Waiter] in
            state.knownToken = max(state.knownToken, token)
            let ready = state.waiters.filter { $0.value.position < token }
            for id in ready.keys { state.waiters[id] = nil }
            return Array(ready.values)
        }
        for waiter in ready { waiter.continuation.resume() }
    }

    /// Whether someone still observes; if not, marks the polling as stopped (under the same lock,
    /// so a new subscriber starts it again).
    private func stillObserved() -> Bool {
        state.withLock { state in
            if state.subscribers > 0 { return true }
            state.polling = false
            return false
        }
    }

    private func pollWhileObserved() async {
        while stillObserved() {
            poll()
            try? await Task.sleep(for: Self.pollInterval)
        }
    }

    /// The signalling engine's loop (on a thread of its own): reads the token, then waits for the
    /// signal of a commit past it, or the fallback interval; polls every ``pollInterval`` while
    /// the signal is down, or when a signal did not show up in the token yet (the signal came
    /// first), so a stale signal cannot spin the loop.
    private func waitWhileObserved(_ signalling: any HistorySignalling) {
        var previous = state.withLock { $0.knownToken }
        var signalled = false
        while stillObserved() {
            poll()
            let known = state.withLock { $0.knownToken }
            if signalled && known <= previous {
                Thread.sleep(forTimeInterval: Self.seconds(Self.pollInterval))
            }
            previous = known
            let deadline = ContinuousClock.now + Self.fallbackPollInterval.withLock { $0 }
            switch signalling.waitForHistory(after: known, until: deadline) {
            case true?: signalled = true
            case false?: signalled = false
            case nil:
                signalled = false
                Thread.sleep(forTimeInterval: Self.seconds(Self.pollInterval))
            }
        }
    }

    private static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}

/// Runs store reads off the caller's thread (an observer may iterate on the main actor; the
/// read must not block it), on a serial queue of Strata's own: a queue created this way gets a
/// thread even when the program keeps every global-queue thread busy with blocking work, which
/// would otherwise stall every observer (Swift concurrency runs on those threads too).
enum Offload {
    private static let queue = DispatchQueue(label: "strata.history.read")

    static func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result { try body() }) }
        }
    }
}
