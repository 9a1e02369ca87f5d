import Foundation
import Ledger
import Strata
import StrataTestSupport

/// Workload 7: transfers per second through `TransactionService` from 1, 2, 4 and 8 tasks over
/// 20 accounts, and from 4 processes of 8 tasks on the same store (``TransferProcesses``);
/// conflicts are retried by the core, as in an application.
enum ConcurrentTransfers {
    static let taskCounts = [1, 2, 4, 8]

    static func measure(_ engine: EngineChoice, in directory: URL, rows: Int) async throws -> [WorkloadResult] {
        let (container, accounts) = try await LedgerWorkloads.makeLedger(
            engine, in: directory, name: "transfers", accounts: 20)
        let service = TransactionService(contexts: container)
        let transfers = max(40, min(rows / 250, 400))
        var rates: [Int: Double] = [:]
        for tasks in taskCounts {
            let started = ContinuousClock.now
            let made = try await transfer(
                service, accounts: accounts, tasks: tasks, perTask: transfers / tasks, seed: 0)
            let elapsed = ContinuousClock.now - started
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            rates[tasks] = Double(made) / seconds
        }
        // The same eight tasks in each of several processes on the one store (the store stays
        // open here, idle, as a server's other processes would keep theirs).
        let processRate = try await TransferProcesses.rate(
            engine, directory: directory.appendingPathComponent("transfers"), transfers: transfers)
        let single = rates[1] ?? 0
        let eight = rates[TransferProcesses.tasks] ?? 0
        let processLine = WorkloadResult(
            workload: .ledgerTransfers,
            name: "\(Workload.ledgerTransfers.title), \(TransferProcesses.processes) processes × "
                + "\(TransferProcesses.tasks) tasks",
            engine: engine, unit: "transfers/s", baselineName: "\(TransferProcesses.tasks) tasks, 1 process",
            strata: processRate, baseline: eight, ratio: eight > 0 ? processRate / eight : nil, difference: nil,
            itemsPerRun: transfers * TransferProcesses.processes, target: nil, targetLimit: nil, targetMet: nil,
            status: "measured", strataSamples: nil, baselineSamples: nil)
        return taskCounts.map { tasks in
            let rate = rates[tasks] ?? 0
            return WorkloadResult(
                workload: .ledgerTransfers,
                name: "\(Workload.ledgerTransfers.title), \(tasks) task\(tasks == 1 ? "" : "s")", engine: engine,
                unit: "transfers/s", baselineName: "1 task", strata: rate, baseline: single,
                ratio: single > 0 ? rate / single : nil,
                difference: nil, itemsPerRun: transfers, target: nil, targetLimit: nil, targetMet: nil,
                status: "measured",
                strataSamples: nil, baselineSamples: nil)
        } + [processLine]
    }

    /// Makes `perTask` random transfers among `accounts` from each of `tasks` tasks (the
    /// sequence of each task fixed by `seed`); returns how many were made.
    static func transfer(
        _ service: TransactionService, accounts: [String], tasks: Int, perTask: Int, seed: Int
    ) async throws -> Int {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for task in 0..<tasks {
                group.addTask {
                    var random = SeededGenerator(seed: UInt64(seed + task * 7_919 + tasks))
                    for _ in 0..<perTask {
                        let from = Int.random(in: 0..<accounts.count, using: &random)
                        let to = (from + Int.random(in: 1..<accounts.count, using: &random)) % accounts.count
                        try await service.transfer(
                            from: accounts[from], to: accounts[to],
                            amount: Int64.random(in: 1...500, using: &random), note: "bench")
                    }
                }
            }
            try await group.waitForAll()
        }
        return perTask * tasks
    }
}
