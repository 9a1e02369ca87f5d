import Foundation
import Ledger
import Strata
import StrataTestSupport
import Testing

extension LedgerTests {
    /// Many transfers at once over a few accounts: every transfer is all-or-nothing, conflicts are
    /// re-run by the core, and the books still balance.
    @Suite("ledger: concurrent transfers")
    struct ConcurrentTransferTests {
        static let accountCount = 20
        static let taskCount = 8
        static let transfersPerTask = 200
        static let openingBalance: Int64 = 100_000

        @Test(
            "8 tasks × 200 random transfers among 20 accounts keep every balance and the total",
            arguments: EngineKind.allCases)
        func concurrentTransfers(kind: EngineKind) async throws {
            let ledger = try LedgerFixture(kind)
            var ids: [String] = []
            for number in 0..<Self.accountCount {
                // Every other account forbids overdraft, so some transfers are refused under contention.
                let account = try await ledger.accounts.create(
                    name: "Account \(number)", currency: "USD", openingBalance: Self.openingBalance,
                    allowsOverdraft: number.isMultiple(of: 2))
                ids.append(account.id)
            }
            let accountIDs = ids

            let start = ContinuousClock.now
            let (outcomes, retries) = try await RetryStatistics.observing {
                try await Self.transfer(ledger, accountIDs)
            }
            let done = outcomes.map(\.done).reduce(0, +)
            let refused = outcomes.map(\.refused).reduce(0, +)
            print(
                """
                ledger transfers \(kind): \(done) done, \(refused) refused, \(retries.conflicts) conflicts, \
                \(retries.retries) retries, \(ContinuousClock.now - start)
                """)
            #expect(done + refused == Self.taskCount * Self.transfersPerTask)
            #expect(done > 0)

            let audit = try await ledger.audit()
            #expect(audit.lines.count == Self.accountCount)
            for line in audit.lines {
                #expect(
                    line.balance == line.expectedBalance,
                    "\(line.name): balance \(line.balance), transactions say \(line.expectedBalance)")
                #expect(line.runningBalancesAgree, "\(line.name): running balances disagree")
            }
            #expect(audit.lines.map(\.balance).reduce(0, +) == Int64(Self.accountCount) * Self.openingBalance)
            #expect(audit.transactionCount == 2 * done)
            let snapshots = try await ledger.accounts.list()
            for account in snapshots where !account.allowsOverdraft {
                #expect(account.balance >= 0, "\(account.name) forbids overdraft but holds \(account.balance)")
            }
        }

        /// Runs every task's transfers; returns each task's transfers done and refused.
        static func transfer(
            _ ledger: LedgerFixture, _ accountIDs: [String]
        ) async throws -> [(done: Int, refused: Int)] {
            try await withThrowingTaskGroup(of: (done: Int, refused: Int).self) { group in
                for task in 0..<Self.taskCount {
                    group.addTask {
                        var random = SeededGenerator(seed: UInt64(task) &* 0x9E37_79B9 &+ 17)
                        var done = 0
                        var refused = 0
                        for _ in 0..<Self.transfersPerTask {
                            let from = Int.random(in: 0..<accountIDs.count, using: &random)
                            var to = Int.random(in: 0..<accountIDs.count - 1, using: &random)
                            if to >= from { to += 1 }
                            let amount = Int64.random(in: 1...40_000, using: &random)
                            do {
                                try await ledger.transactions.transfer(
                                    from: accountIDs[from], to: accountIDs[to], amount: amount, note: "t\(task)")
                                done += 1
                            } catch LedgerError.insufficientFunds {
                                refused += 1
                            }
                        }
                        return (done, refused)
                    }
                }
                return try await group.reduce(into: [(done: Int, refused: Int)]()) { $0.append($1) }
            }
        }
    }
}
