/// Workloads 7 (concurrent ledger transfers) and 8 (main-actor stall) run the ledger domain
/// services, which live in the `Ledger` module. Until that module exists they are reported as
/// pending, never estimated.
///
/// When it lands, each becomes its own file beside this one (`LedgerTransfersWorkload.swift`,
/// `MainActorStallWorkload.swift`) with a function `run(on: EngineChoice, ...) async throws ->
/// [WorkloadResult]`, called from `BenchmarkRun` for each engine in place of ``results``.
enum PendingWorkloads {
    static let reason = "pending the Ledger module"

    static let results: [WorkloadResult] = [
        .pending(.ledgerTransfers, reason: reason), .pending(.mainActorStall, reason: reason),
    ]
}
