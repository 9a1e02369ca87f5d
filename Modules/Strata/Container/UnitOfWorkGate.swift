import Synchronization

/// Where a container's units of work (``ContextFactory/performUnitOfWork(retries:_:)``) enter,
/// so that one that keeps losing conflicts re-runs alone in its process instead of racing the
/// same writers again.
///
/// First attempts and first re-runs run side by side (shared). An attempt after two losses
/// (`.conflict` or `.busy`) asks to run alone: new units of work wait while the ones already
/// running finish, then it runs with none beside it, so no unit of work of this container can
/// change its rows between its reads and its commit. Within its own process a unit of work
/// therefore loses at most twice, where eight tasks raising one counter used to lose three times or
/// more in a row (and on a loaded machine could run out of 50 retries). Going alone after the first
/// loss bounded that at once, but draining the running attempts for every conflict cost about a
/// tenth of the ledger's 8-task transfer rate on LMDB and PostgreSQL (Docs/Concurrency.md). Writers
/// in other processes still conflict, and are retried with the policy's back-off.
///
/// The gate only orders attempts; correctness still comes from the commit's version checks. So
/// no wait at the gate is unbounded: a unit of work that waits longer than its bound (the retry
/// policy's `maxDelay`) runs anyway, beside the others, and a hung unit of work cannot stop the
/// container.
final class UnitOfWorkGate: Sendable {
    /// How an attempt entered: beside others, or alone.
    enum Ticket: Sendable {
        case shared
        case alone
    }

    private struct Waiter {
        let id: UInt64
        let wantsAlone: Bool
        let continuation: CheckedContinuation<Ticket, Never>
    }

    private struct State {
        /// Attempts running beside each other.
        var running = 0
        /// Whether an attempt is running alone.
        var aloneRunning = false
        var nextID: UInt64 = 0
        /// Waiters in arrival order; those that want to run alone go first once nothing runs.
        var waiters: [Waiter] = []
    }

    private let state = Mutex(State())

    /// Waits until the attempt may start, at most `bound`; an attempt that asks to run alone gets
    /// `.alone` when it does, and `.shared` when the bound ran out first.
    func enter(alone wantsAlone: Bool, bound: Duration) async -> Ticket {
        if bound <= .zero { return admitAtOnce() }
        let immediate: Ticket? = state.withLock { state in
            if wantsAlone {
                guard !state.aloneRunning, state.running == 0, state.waiters.isEmpty else { return nil }
                state.aloneRunning = true
                return .alone
            }
            guard !state.aloneRunning, !state.waiters.contains(where: \.wantsAlone) else { return nil }
            state.running += 1
            return .shared
        }
        if let immediate { return immediate }
        return await withCheckedContinuation { continuation in
            let id = state.withLock { state in
                state.nextID += 1
                state.waiters.append(Waiter(id: state.nextID, wantsAlone: wantsAlone, continuation: continuation))
                return state.nextID
            }
            // Checked again after queueing: the holders may have left between the two locks.
            admitWaiters()
            Task { [self] in
                try? await Task.sleep(for: bound)
                expire(id)
            }
        }
    }

    /// Ends an attempt that entered with `ticket`.
    func leave(_ ticket: Ticket) {
        state.withLock { state in
            switch ticket {
            case .shared: state.running -= 1
            case .alone: state.aloneRunning = false
            }
        }
        admitWaiters()
    }

    /// An attempt with a zero bound: it runs beside the others at once.
    private func admitAtOnce() -> Ticket {
        state.withLock { $0.running += 1 }
        return .shared
    }

    /// Lets in whoever may run now: the first waiter that wants to run alone once nothing runs,
    /// or, with none of those waiting, every waiter that runs beside others.
    private func admitWaiters() {
        let admitted: [(CheckedContinuation<Ticket, Never>, Ticket)] = state.withLock { state in
            guard !state.aloneRunning else { return [] }
            if let first = state.waiters.firstIndex(where: \.wantsAlone) {
                guard state.running == 0 else { return [] }
                let waiter = state.waiters.remove(at: first)
                state.aloneRunning = true
                return [(waiter.continuation, .alone)]
            }
            let shared = state.waiters
            state.waiters.removeAll()
            state.running += shared.count
            return shared.map { ($0.continuation, .shared) }
        }
        for (continuation, ticket) in admitted { continuation.resume(returning: ticket) }
    }

    /// A waiter whose bound ran out runs beside the others; the ones it held back may follow.
    private func expire(_ id: UInt64) {
        let expired: CheckedContinuation<Ticket, Never>? = state.withLock { state in
            guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
            state.running += 1
            return state.waiters.remove(at: index).continuation
        }
        guard let expired else { return }
        expired.resume(returning: .shared)
        admitWaiters()
    }
}
