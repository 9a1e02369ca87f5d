import Synchronization

/// One call of ``ObjectContext/perform(_:)``: whether its task was cancelled, whether its body
/// has started (exactly one of the queued body and the blocked-call check may claim the call),
/// whether the body is running, and the running body it was called from, if any.
///
/// Internal; `@usableFromInline` only so that the inlinable shell of `perform` can create and
/// cancel it.
@usableFromInline
final class PerformToken: Sendable {
    private enum Flag {
        static let cancelled = 1
        static let running = 2
        static let claimed = 4
    }

    /// The context of the call (its link, which never retains the context).
    let link: ContextLink
    /// The innermost `perform` body running around the caller, read in the caller's task when
    /// the call was made (nil when the call was not made from inside a body). Weak, so that a
    /// chain of calls each made from a task of the previous body (a self-rescheduling loop)
    /// keeps no finished tokens alive; a running body's token is held by its own call.
    weak let outer: PerformToken?
    private let flags = Atomic<Int>(0)

    init(link: ContextLink, outer: PerformToken?) {
        self.link = link
        self.outer = outer
    }

    var isCancelled: Bool { flags.load(ordering: .acquiring) & Flag.cancelled != 0 }
    var isRunning: Bool { flags.load(ordering: .acquiring) & Flag.running != 0 }

    /// Marks the call's task cancelled (from the task's cancellation handler).
    @usableFromInline
    func cancel() { flags.bitwiseOr(Flag.cancelled, ordering: .releasing) }
    func begin() { flags.bitwiseOr(Flag.running, ordering: .releasing) }
    func end() { flags.bitwiseAnd(~Flag.running, ordering: .releasing) }

    /// Claims the call for whoever finishes it (its queued body, or the blocked-call check);
    /// true for the first caller only.
    func claim() -> Bool {
        flags.bitwiseOr(Flag.claimed, ordering: .acquiringAndReleasing).oldValue & Flag.claimed == 0
    }

    /// The still-running body of the same context that this call was made from, directly or
    /// through bodies of other contexts; nil when there is none.
    var blockingBody: PerformToken? {
        var candidate = outer
        while let token = candidate {
            if token.link === link && token.isRunning { return token }
            candidate = token.outer
        }
        return nil
    }
}

/// The `perform` body running around the current code: bound for the duration of each body
/// with a task-local value, which tasks created inside the body (`Task { }`, not
/// `Task.detached`) inherit. Each token links to the body it was called from.
enum PerformScope {
    @TaskLocal static var innermost: PerformToken?

    /// Runs `body` with `token` as the innermost scope.
    static func binding<T>(_ token: PerformToken, _ body: () throws -> T) rethrows -> T {
        try $innermost.withValue(token) { try body() }
    }
}

/// How a queued `perform` call ends before its body would run, or that it runs.
@usableFromInline
enum PerformStart: Sendable {
    case run
    case fail(any Error)
}
