import Foundation
import Ledger
import Strata
import StrataTestSupport
import Testing

extension LedgerTests {
    /// An operation that throws after it has mutated objects leaves nothing behind: not in the
    /// store, and not in the next operation.
    @Suite("ledger: failed operations leave no trace")
    struct NoTraceTests {
        @Test("a transfer refused after building both halves leaves no trace", arguments: EngineKind.allCases)
        func refusedTransfer(kind: EngineKind) async throws {
            let ledger = try LedgerFixture(kind)
            let chart = try await ledger.seedChart()
            let before = try await ledger.audit()

            // Both transactions are inserted and linked before the wallet's balance check throws.
            await #expect(throws: LedgerError.self) {
                try await ledger.transactions.transfer(
                    from: chart.wallet.id, to: chart.savings.id, amount: 9_000, note: "Refused")
            }
            #expect(try await ledger.audit() == before)

            // The next operation saves exactly its own work.
            try await ledger.transactions.transfer(
                from: chart.wallet.id, to: chart.savings.id, amount: 1_000, note: "Accepted")
            let after = try await ledger.audit()
            #expect(after.transactionCount == before.transactionCount + 2)
            #expect(after.line("Wallet")?.notes == ["Accepted"])
            #expect(after.line("Savings")?.notes == ["Accepted"])
            #expect(after.line("Wallet")?.balance == 4_000)
            #expect(after.isConsistent)
        }

        @Test("a transfer whose commit fails leaves no trace", arguments: EngineKind.allCases)
        func failedCommit(kind: EngineKind) async throws {
            let ledger = try LedgerFixture(kind)
            let chart = try await ledger.seedChart()
            let before = try await ledger.audit()

            ledger.faults.failCommit(1)
            let error = await #expect(throws: StrataError.self) {
                try await ledger.transactions.transfer(
                    from: chart.checking.id, to: chart.savings.id, amount: 30_000, note: "Lost")
            }
            guard case .io? = error else {
                Issue.record("expected the injected I/O error, got \(String(describing: error))")
                return
            }
            #expect(try await ledger.audit() == before)

            try await ledger.transactions.add(to: chart.savings.id, amount: 100, note: "Interest")
            let after = try await ledger.audit()
            #expect(after.transactionCount == before.transactionCount + 1)
            #expect(after.line("Savings")?.notes == ["Interest"])
            #expect(after.line("Checking") == before.line("Checking"))
            #expect(after.isConsistent)
        }

        @Test("an add whose commit fails leaves no trace and the next add works", arguments: EngineKind.allCases)
        func failedAdd(kind: EngineKind) async throws {
            let ledger = try LedgerFixture(kind)
            let chart = try await ledger.seedChart()
            ledger.faults.failCommit(1)
            await #expect(throws: StrataError.self) {
                try await ledger.transactions.add(to: chart.checking.id, amount: -500, note: "Lost")
            }
            try await ledger.transactions.add(to: chart.checking.id, amount: -700, note: "Kept")
            let history = try await ledger.transactions.transactions(for: chart.checking.id)
            #expect(history.map(\.note) == ["Kept"])
            #expect(history.map(\.runningBalance) == [99_300])
        }
    }
}
