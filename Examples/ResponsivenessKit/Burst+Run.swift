public import Ledger

/// What one measured burst saw: the heartbeat's gaps and how long the steps took.
public struct BurstRun: Sendable {
    /// The heartbeat's gaps while the steps ran (and for 20 ms before and after).
    public var gaps: GapSummary
    /// The time from the first step's start to the last step's end.
    public var elapsed: Duration
}

extension Burst {
    /// Runs the steps from the main actor while a ``Heartbeat`` ticks, yielding between steps as
    /// an app is free between taps.
    ///
    /// The heartbeat starts 20 ms before the first step and stops 20 ms after the last, as in
    /// ``IdleHeartbeat/measure(for:)``, so an idle run of the same ``BurstRun/elapsed`` covers the
    /// same span.
    ///
    /// ```swift
    /// let run = try await burst.measure { step in try await work(step) }
    /// print(run.gaps.longest.milliseconds)
    /// ```
    /// - Throws: the first error `step` throws.
    @MainActor
    public func measure(_ step: @MainActor (Step) async throws -> Void) async throws -> BurstRun {
        let heartbeat = Heartbeat()
        heartbeat.start()
        try await Task.sleep(for: IdleHeartbeat.margin)
        let started = ContinuousClock.now
        for item in steps {
            try await step(item)
            await Task.yield() // between operations the main actor is free, as between taps
        }
        let elapsed = ContinuousClock.now - started
        try await Task.sleep(for: IdleHeartbeat.margin)
        return BurstRun(gaps: GapSummary(await heartbeat.stop()), elapsed: elapsed)
    }

    /// The anti-pattern: every step through a ``MainActorLedger``, which holds the main actor
    /// until its shared context has done the work.
    /// - Parameter accounts: the account URIs the steps' indices name.
    /// - Throws: ``LedgerError`` and storage errors from the ledger.
    @MainActor
    public func measure(_ ledger: MainActorLedger, accounts: [String]) async throws -> BurstRun {
        try await measure { step in
            try ledger.transfer(from: accounts[step.from], to: accounts[step.to], amount: step.amount, note: "burst")
            _ = try ledger.transactions(for: accounts[step.from])
        }
    }

    /// The pattern: every step through the services, each call in a fresh background context
    /// that the main actor awaits.
    /// - Parameter accounts: the account URIs the steps' indices name.
    /// - Throws: ``LedgerError`` and storage errors from the services.
    @MainActor
    public func measure(_ service: TransactionService, accounts: [String]) async throws -> BurstRun {
        try await measure { step in
            try await service.transfer(
                from: accounts[step.from], to: accounts[step.to], amount: step.amount, note: "burst")
            _ = try await service.transactions(for: accounts[step.from])
        }
    }
}
