import Foundation
import Ledger
import Strata
import StrataTestSupport
import Testing

extension LedgerTests {
    /// The article's central operation: moving a transaction to another account recalculates both
    /// accounts in one `perform` and one save, so both balances change or neither does.
    @Suite("ledger: moving a transaction")
    struct MoveTransactionTests {
        @Test("moving a transaction updates both balances", arguments: EngineKind.allCases)
        func moveUpdatesBoth(kind: EngineKind) async throws {
            let ledger = try LedgerFixture(kind)
            let chart = try await ledger.seedChart()
            let groceries = try await ledger.transactions.add(to: chart.checking.id, amount: -4_500, note: "Groceries")
            try await ledger.transactions.add(to: chart.checking.id, amount: -1_000, note: "Books")
            try await ledger.transactions.add(to: chart.savings.id, amount: 7_000, note: "Gift")

            var moved = groceries
            moved.accountID = chart.savings.id
            let saved = try await ledger.transactions.update(transaction: moved, originalAccountID: chart.checking.id)
            #expect(saved.accountID == chart.savings.id)

            #expect(try await ledger.accounts.balance(of: chart.checking.id) == 99_000)
            #expect(try await ledger.accounts.balance(of: chart.savings.id) == 2_500)
            #expect(try await ledger.transactions.transactions(for: chart.checking.id).map(\.note) == ["Books"])
            #expect(
                try await ledger.transactions.transactions(for: chart.checking.id).map(\.runningBalance) == [99_000])
            #expect(
                Set(try await ledger.transactions.transactions(for: chart.savings.id).map(\.note)) == [
                    "Groceries", "Gift",
                ])
            let audit = try await ledger.audit()
            #expect(audit.isConsistent)
            #expect(audit.transactionCount == 3)
        }

        @Test("when the save fails, neither balance changes", arguments: EngineKind.allCases)
        func failedSaveChangesNeither(kind: EngineKind) async throws {
            let ledger = try LedgerFixture(kind)
            let chart = try await ledger.seedChart()
            let groceries = try await ledger.transactions.add(to: chart.checking.id, amount: -4_500, note: "Groceries")
            let before = try await ledger.audit()

            var moved = groceries
            moved.accountID = chart.savings.id
            ledger.faults.failCommit(1)
            await #expect(throws: StrataError.self) {
                try await ledger.transactions.update(transaction: moved, originalAccountID: chart.checking.id)
            }
            #expect(ledger.faults.injectedFailures == 1)
            let after = try await ledger.audit()
            #expect(after == before)
            #expect(after.line("Checking")?.balance == 95_500)
            #expect(after.line("Savings")?.balance == 0)
            #expect(try await ledger.transactions.transaction(groceries.id).accountID == chart.checking.id)

            // The same call succeeds once the store works again: nothing was left half-done.
            try await ledger.transactions.update(transaction: moved, originalAccountID: chart.checking.id)
            #expect(try await ledger.accounts.balance(of: chart.checking.id) == 100_000)
            #expect(try await ledger.accounts.balance(of: chart.savings.id) == -4_500)
            #expect(try await ledger.audit().isConsistent)
        }

        @Test(
            "moving into an account of another currency is refused and changes nothing",
            arguments: EngineKind.allCases)
        func currencyMismatch(kind: EngineKind) async throws {
            let ledger = try LedgerFixture(kind)
            let chart = try await ledger.seedChart()
            let taxi = try await ledger.transactions.add(to: chart.checking.id, amount: -2_500, note: "Taxi")
            let before = try await ledger.audit()
            var moved = taxi
            moved.accountID = chart.travel.id
            await #expect(
                throws: LedgerError.currencyMismatch(
                    source: "Checking", sourceCurrency: "USD", target: "Travel", targetCurrency: "EUR")
            ) {
                try await ledger.transactions.update(transaction: moved, originalAccountID: chart.checking.id)
            }
            #expect(try await ledger.audit() == before)
        }

        @Test(
            "moving a deposit out of a no-overdraft account that needs it is refused", arguments: EngineKind.allCases)
        func moveWouldOverdraw(kind: EngineKind) async throws {
            let ledger = try LedgerFixture(kind)
            let chart = try await ledger.seedChart()
            let pay = try await ledger.transactions.add(to: chart.wallet.id, amount: 10_000, note: "Pay")
            try await ledger.transactions.add(to: chart.wallet.id, amount: -12_000, note: "Shoes")
            let before = try await ledger.audit()
            var moved = pay
            moved.accountID = chart.savings.id
            await #expect(
                throws: LedgerError.insufficientFunds(
                    account: "Wallet", available: 3_000, attemptedBalance: -7_000, currency: "USD")
            ) {
                try await ledger.transactions.update(transaction: moved, originalAccountID: chart.wallet.id)
            }
            #expect(try await ledger.audit() == before)
        }
    }
}
