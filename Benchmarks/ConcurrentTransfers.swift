import Foundation
import Ledger
import Strata
import StrataTestSupport

/// Workload 7: transfers per second through `TransactionService` from 1, 2, 4 and 8 tasks over
/// 20 accounts; conflicts are retried by the core, as in an application.
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
            try await withThrowingTaskGroup(of: Void.self) { group in
                for task in 0..<tasks {
                    group.addTask {
                        var random = SeededGenerator(seed: UInt64(task * 7_919 + tasks))
                        for _ in 0..<(transfers / tasks) {
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
            let elapsed = ContinuousClock.now - started
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            rates[tasks] = Double((transfers / tasks) * tasks) / seconds
        }
        let single = rates[1] ?? 0
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
        }
    }
}
