import Foundation
import Synchronization

/// Turns SIGINT and SIGTERM into cancelling one task, so a long-running command ends its loop,
/// says where it stopped and exits 0 instead of being killed mid-line.
///
/// The handlers are installed when it is made (before the command says it is ready), and a
/// signal that arrives before ``run(_:)`` starts its task cancels that task at once.
final class StopSignals: Sendable {
    private let stop = StopRequest()
    private let sources: [SignalSource]

    init() {
        let stop = stop
        sources = [SIGINT, SIGTERM].map { number in SignalSource(number) { stop.request() } }
    }

    deinit {
        for source in sources { source.cancel() }
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

/// One signal delivered to a handler on a dispatch queue instead of its default action.
private final class SignalSource: @unchecked Sendable {
    // Set up once in init, then only cancelled.
    private let source: any DispatchSourceSignal

    init(_ number: Int32, handler: @escaping @Sendable () -> Void) {
        signal(number, SIG_IGN)
        source = DispatchSource.makeSignalSource(signal: number, queue: .global())
        source.setEventHandler(handler: handler)
        source.resume()
    }

    func cancel() {
        source.cancel()
    }
}
