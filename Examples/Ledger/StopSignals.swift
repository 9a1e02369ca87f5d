import Foundation
import Synchronization

/// Turns SIGINT and SIGTERM into cancelling one task, so a long-running command ends its loop,
/// says where it stopped and exits 0 instead of being killed mid-line.
///
/// ``install()``, first thing in `main` (before any other thread starts), puts the handlers in
/// place; from then on no SIGINT or SIGTERM is lost. One that arrives before a `StopSignals` is
/// made, or before ``run(_:)`` starts its task, cancels that task at once. They are taken
/// whatever the parent left them as: ignored (a non-interactive shell starts a background job
/// with SIGINT ignored), or blocked, in which case one already pending is taken too.
///
/// A dispatch signal source is not used: it takes the signal over asynchronously, on libdispatch's
/// manager thread, after `resume()` returns, and a signal that came in before was discarded
/// (the disposition was still "ignore"); a pending one was discarded as soon as a dispatch
/// thread, which does not block SIGINT, started. Here `signal(2)` installs a handler at once; it
/// only writes a byte to a pipe, and a thread of its own reads the pipe and requests the stop.
final class StopSignals: Sendable {
    private let stop = StopRequest()

    /// Installs the handlers of SIGINT and SIGTERM, once per process (again, it does nothing).
    /// Call it before any other thread starts: a thread started before it with the signals
    /// unblocked takes one that is pending while they are still ignored, and it is lost.
    static func install() {
        _ = StopSignalRelay.shared
    }

    /// Makes this the one that SIGINT and SIGTERM stop (installing the handlers if needed).
    init() {
        StopSignalRelay.shared.listen(stop)
    }

    deinit {
        StopSignalRelay.shared.stopListening(stop)
    }

    /// Runs `body` in a task that SIGINT or SIGTERM cancels, and returns what it returns.
    /// - Throws: what `body` throws.
    func run<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) async throws -> T {
        let task = Task { try await body() }
        stop.attach { task.cancel() }
        return try await task.value
    }
}

/// Whether a stop was requested, and how to stop the running task.
private final class StopRequest: Sendable {
    private struct State {
        var requested = false
        var cancel: (@Sendable () -> Void)?
    }

    private let state = Mutex(State())

    /// A signal arrived: cancel the task now, or as soon as one is attached.
    func request() {
        let cancel = state.withLock { state in
            state.requested = true
            return state.cancel
        }
        cancel?()
    }

    /// The running task's cancellation (called at once when a stop was already requested).
    func attach(_ cancel: @escaping @Sendable () -> Void) {
        let requested = state.withLock { state in
            state.cancel = cancel
            return state.requested
        }
        if requested { cancel() }
    }
}

/// The pipe the signal handler writes to: its read end, and its write end (non-blocking, so the
/// handler never waits). Made on first use, before any handler is installed; nil when the
/// process cannot make one (no descriptors left), and then no handler is installed: SIGINT and
/// SIGTERM keep their default action and end the process, which is still a stop.
private let stopSignalPipe: (read: Int32, write: Int32)? = {
    var ends: [Int32] = [-1, -1]
    guard pipe(&ends) == 0 else { return nil }
    for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
    _ = fcntl(ends[1], F_SETFL, fcntl(ends[1], F_GETFL) | O_NONBLOCK)
    return (ends[0], ends[1])
}()

/// The signal handler: writes one byte to the pipe, which is all it may safely do (`write` is
/// async-signal-safe; `errno` is kept for the code it interrupted).
private func relayStopSignal(_ number: Int32) {
    let saved = errno
    var byte = UInt8(truncatingIfNeeded: number)
    guard let ends = stopSignalPipe else { return }
    _ = write(ends.write, &byte, 1)
    errno = saved
}

/// One per process: installs the handler of SIGINT and SIGTERM and reads the pipe on a thread of
/// its own, passing each signal on to the current listener, or keeping it for the next one.
private final class StopSignalRelay: Sendable {
    static let shared = StopSignalRelay()

    private struct State {
        var listener: StopRequest?
        /// A signal came while there was no listener.
        var missed = false
    }

    private let state = Mutex(State())

    /// Installs the handler first, so that the signals are never unblocked while ignored, then
    /// starts the reader and unblocks them on the calling thread: a signal pending since the
    /// parent blocked it is handled before this returns.
    private init() {
        let signals = [SIGINT, SIGTERM]
        guard let readEnd = stopSignalPipe?.read else {
            // No pipe: the default action (even where the parent ignored the signals) still stops.
            for number in signals { _ = signal(number, SIG_DFL) }
            Self.unblock(signals)
            return
        }
        for number in signals { _ = signal(number, relayStopSignal) }
        let thread = Thread { [self] in
            // A thread on which the signals are never blocked, whatever the parent blocked.
            Self.unblock(signals)
            var bytes = [UInt8](repeating: 0, count: 16)
            while true {
                let count = read(readEnd, &bytes, bytes.count)
                if count > 0 {
                    received()
                } else if count == 0 || errno != EINTR {
                    return
                }
            }
        }
        thread.name = "ledger stop signals"
        thread.start()
        Self.unblock(signals)
    }

    /// Makes `request` the listener; requests it at once when a signal came with none.
    func listen(_ request: StopRequest) {
        let missed = state.withLock { state in
            state.listener = request
            defer { state.missed = false }
            return state.missed
        }
        if missed { request.request() }
    }

    /// Drops `request` as the listener, if it still is.
    func stopListening(_ request: StopRequest) {
        state.withLock { state in
            if state.listener === request { state.listener = nil }
        }
    }

    /// A signal came: passed on to the listener, or kept for the next one.
    private func received() {
        let listener = state.withLock { state in
            if state.listener == nil { state.missed = true }
            return state.listener
        }
        listener?.request()
    }

    /// Unblocks `signals` on the calling thread.
    private static func unblock(_ signals: [Int32]) {
        var set = sigset_t()
        sigemptyset(&set)
        for number in signals { sigaddset(&set, number) }
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
    }
}
