import Foundation
import Ledger
import Strata
import StrataTestSupport
import Testing

extension LedgerTests {
    /// Service work never runs on the main thread, even when the caller is on the main actor.
    ///
    /// The check happens inside the units of work: every store access a service makes (a read
    /// snapshot, a row, a fetch, a key allocation, a commit) runs synchronously inside its
    /// context's `perform`, and the fault-injecting engine records the thread of each one.
    @Suite("ledger: work stays off the main thread")
    struct OffMainThreadTests {
        @Test("every service method's store work runs off the main thread", arguments: EngineKind.allCases)
        @MainActor
        func serviceWorkRunsOffMain(kind: EngineKind) async throws {
            #expect(MainQueue.isCurrent, "the caller runs on the main actor")
            let ledger = try LedgerFixture(kind)
            let accounts = ledger.accounts
            let transactions = ledger.transactions

            let checking = try await accounts.create(name: "Checking", currency: "USD", openingBalance: 10_000)
            let savings = try await accounts.create(name: "Savings", currency: "USD")
            _ = try await accounts.list()
            _ = try await accounts.account(uri: checking.id)
            _ = try await accounts.balance(of: checking.id)
            _ = try await accounts.rename(savings.id, to: "Reserve")
            let rent = try await transactions.add(to: checking.id, amount: -3_000, note: "Rent")
            _ = try await transactions.transactions(for: checking.id)
            _ = try await transactions.transaction(rent.id)
            var moved = rent
            moved.accountID = savings.id
            try await transactions.update(transaction: moved, originalAccountID: checking.id)
            let receipt = try await transactions.transfer(
                from: checking.id, to: savings.id, amount: 1_000, note: "Save")
            try await transactions.delete(transaction: receipt.deposit.id)
            let spare = try await accounts.create(name: "Spare", currency: "USD")
            try await accounts.delete(spare.id)

            #expect(ledger.faults.storeCalls > 20)
            #expect(ledger.faults.commits == 9)
            #expect(ledger.faults.mainThreadCalls == [])
        }
    }
}
