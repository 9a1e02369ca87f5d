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
    /// The token of the `perform` body this call was made from, if any (set when the body begins).
    nonisolated(unsafe) private(set) var outer: PerformToken?
    private let flags = Atomic<Int>(0)

    init(link: ContextLink) {
        self.link = link
    }

    /// Records the enclosing body's token; called once, on the context's queue, before the
    /// token is shared through ``PerformScope``, and never changed afterwards.
    func nest(in outer: PerformToken?) {
        self.outer = outer
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
    /// The innermost running body's token; each token links to the one it was nested in.
    @TaskLocal private static var innermost: PerformToken?

    /// Runs `body` with `token` as the innermost scope.
    static func binding<T>(_ token: PerformToken, _ body: () throws -> T) rethrows -> T {
        token.nest(in: innermost)
        return try $innermost.withValue(token) { try body() }
    }

    /// The still-running body of this context's `perform` that the caller was started from, if any.
    static func running(in link: ContextLink) -> PerformToken? {
        var candidate = innermost
        while let token = candidate {
            if token.link === link && token.isRunning { return token }
            candidate = token.outer
        }
        return nil
    }
}
