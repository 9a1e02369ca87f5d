import Synchronization

/// One call of ``ObjectContext/perform(_:)``: whether its task was cancelled, and whether its
/// body is running (so that a `perform` of the same context, started from a task the body
/// made and waited for, can refuse instead of deadlocking).
final class PerformToken: Sendable {
    private enum Flag {
        static let cancelled = 1
        static let running = 2
    }

    /// The context of the call (its link, which never retains the context).
    let link: ContextLink
    private let flags = Atomic<Int>(0)

    init(link: ContextLink) {
        self.link = link
    }

    var isCancelled: Bool { flags.load(ordering: .acquiring) & Flag.cancelled != 0 }
    var isRunning: Bool { flags.load(ordering: .acquiring) & Flag.running != 0 }

    func cancel() { flags.bitwiseOr(Flag.cancelled, ordering: .releasing) }
    func begin() { flags.bitwiseOr(Flag.running, ordering: .releasing) }
    func end() { flags.bitwiseAnd(~Flag.running, ordering: .releasing) }
}

/// The `perform` bodies running around the current code: bound for the duration of each body
/// with a task-local value, which tasks created inside the body (`Task { }`, not
/// `Task.detached`) inherit.
enum PerformScope {
    @TaskLocal private static var tokens: [PerformToken] = []

    /// Runs `body` with `token` added to the scope.
    static func binding<T>(_ token: PerformToken, _ body: () throws -> T) rethrows -> T {
        try $tokens.withValue(tokens + [token]) { try body() }
    }

    /// The still-running body of this context's `perform` that the caller was started from, if any.
    static func running(in link: ContextLink) -> PerformToken? {
        tokens.last { $0.link === link && $0.isRunning }
    }
}
