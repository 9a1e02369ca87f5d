import Foundation
import Ledger
import Strata
import StrataTestSupport
import Synchronization
import Testing

/// Jepsen's bank test, through the ledger service: concurrent transfers between accounts that
/// forbid overdraft, while a reader keeps summing every balance. Money is never created or
/// destroyed, no snapshot is ever torn, and the history replays to every balance.
///
/// Transfers of up to 1,500 against opening balances of 1,000 make overdraft refusals common,
/// so "no balance negative" is exercised: the test asserts that refusals happened.
@Suite("bank invariant", .serialized)
struct BankInvariantTests {
    static let accountCount = 50
    static let total: Int64 = 50_000
    /// The largest transfer: above an account's opening balance (1,000), so many are refused.
    static let largestTransfer: Int64 = 1_500

    @Test(
        """
        8 tasks × 500 transfers of up to 1,500 keep every snapshot at 50,000, refuse overdrafts, no balance \
        negative, history replayable
        """,
        arguments: EngineKind.allCases)
    func bank(kind: EngineKind) async throws {
        let store = try TestStore(kind)
        let container = try store.open(schema: .ledger)
        let accounts = AccountService(contexts: container)
        let transactions = TransactionService(contexts: container)
        var ids: [String] = []
        for index in 0..<Self.accountCount {
            ids.append(
                try await accounts.create(
                    name: "acct-\(index)", currency: "USD", openingBalance: Self.total / Int64(Self.accountCount),
                    allowsOverdraft: false
                ).id)
        }
        let accountIDs = ids
        let writersDone = DoneCounter()

        let (outcome, counts) = try await RetryStatistics.observing {
            try await withThrowingTaskGroup(of: Outcome.self) { group in
                for writer in 0..<8 {
                    group.addTask {
                        var generator = SeededGenerator(seed: UInt64(writer) &* 0x9E37_79B9 &+ 1)
                        var outcome = Outcome()
                        for _ in 0..<500 {
                            let from = accountIDs[Int.random(in: 0..<accountIDs.count, using: &generator)]
                            var to = from
                            while to == from {
                                to = accountIDs[Int.random(in: 0..<accountIDs.count, using: &generator)]
                            }
                            do {
                                try await transactions.transfer(
                                    from: from, to: to,
                                    amount: Int64.random(in: 1...Self.largestTransfer, using: &generator), note: "bank")
                                outcome.transfers += 1
                            } catch LedgerError.insufficientFunds {
                                outcome.refused += 1
                            } catch StrataError.retriesExhausted {
                                outcome.exhausted += 1
                            }
                        }
                        writersDone.increment()
                        return outcome
                    }
                }
                group.addTask {
                    var outcome = Outcome()
                    while writersDone.value < 8 {
                        let balances = try await accounts.list().map(\.balance)
                        outcome.snapshots += 1
                        if balances.count != Self.accountCount || balances.reduce(0, +) != Self.total {
                            outcome.tornSnapshots += 1
                        }
                        if balances.contains(where: { $0 < 0 }) { outcome.negativeSnapshots += 1 }
                        try await Task.sleep(for: .milliseconds(3))
                    }
                    return outcome
                }
                return try await group.reduce(into: Outcome()) { $0.add($1) }
            }
        }

        let finalBalances = try await accounts.list().map(\.balance)
        #expect(!finalBalances.contains { $0 < 0 }, "final balances below zero: \(finalBalances.filter { $0 < 0 })")

        // Replay: every balance is its opening balance plus its transactions.
        var replayed: Int64 = 0
        var mismatches: [String] = []
        for id in accountIDs {
            let account = try await accounts.account(uri: id)
            let history = try await transactions.transactions(for: id)
            let expected = account.openingBalance + history.reduce(0) { $0 + $1.amount }
            if expected != account.balance { mismatches.append("\(account.name): \(account.balance) ≠ \(expected)") }
            replayed += account.balance
        }
        print(
            """
            bank \(kind): \(outcome.transfers) transfers, \(outcome.refused) refused for overdraft, \
            \(outcome.snapshots) snapshots, \(counts.conflicts) conflicts, \(counts.retries) retries, \
            \(counts.exhausted) budgets exhausted
            """
        )
        #expect(outcome.tornSnapshots == 0, "snapshots that did not total \(Self.total)")
        #expect(outcome.negativeSnapshots == 0, "snapshots with a negative balance")
        #expect(outcome.snapshots > 0)
        #expect(mismatches.isEmpty, "balances that do not replay: \(mismatches.prefix(5))")
        #expect(replayed == Self.total)
        #expect(outcome.transfers + outcome.refused + outcome.exhausted == 4_000)
        #expect(outcome.transfers > 1_000, "most transfers must still go through")
        #expect(
            outcome.refused > 100,
            """
            transfers larger than the balance must be refused for overdraft, or 'no balance negative' is never \
            exercised
            """
        )
        #expect(counts.conflicts > 0, "8 concurrent writers over 50 accounts should collide at least once")
        #expect(counts.exhausted == 0 && outcome.exhausted == 0, "a transfer ran out of retries")
    }

    /// How many writers have finished, shared with the reader.
    final class DoneCounter: Sendable {
        private let count = Mutex(0)
        var value: Int { count.withLock { $0 } }
        func increment() { count.withLock { $0 += 1 } }
    }

    struct Outcome: Sendable {
        var transfers = 0
        var refused = 0
        var exhausted = 0
        var snapshots = 0
        var tornSnapshots = 0
        var negativeSnapshots = 0

        mutating func add(_ other: Outcome) {
            transfers += other.transfers
            refused += other.refused
            exhausted += other.exhausted
            snapshots += other.snapshots
            tornSnapshots += other.tornSnapshots
            negativeSnapshots += other.negativeSnapshots
        }
    }

}
