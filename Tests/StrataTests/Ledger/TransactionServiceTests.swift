import Foundation
import Ledger
import Strata
import Testing

extension LedgerTests {
    /// `TransactionService` on every engine: add, history, update, delete, transfer, and the
    /// ledger errors.
    @Suite("ledger: transactions")
    struct TransactionServiceTests {
        @Test("adds keep running balances; history is newest first", arguments: EngineKind.allCases)
        func addAndHistory(kind: EngineKind) async throws {
            let ledger = try LedgerFixture(kind)
            let chart = try await ledger.seedChart()
            let start = Date(timeIntervalSince1970: 1_700_000_000)
            for (offset, (text, note)) in [("2500.00", "Salary"), ("-1200", "Rent"), ("-45.5", "Groceries")]
                .enumerated()
            {
                // Amounts travel as integer minor units: parsed from text, formatted back the same.
                try await ledger.transactions.add(
                    to: chart.checking.id, amount: try MinorUnits.parse(text), note: note,
                    date: start + Double(offset) * 86_400)
            }
            // Added last but dated first: it goes to the start of the history.
            try await ledger.transactions.add(to: chart.checking.id, amount: 1, note: "Interest", date: start - 86_400)

            let history = try await ledger.transactions.transactions(for: chart.checking.id)
            #expect(history.map(\.note) == ["Groceries", "Rent", "Salary", "Interest"])
            #expect(history.map { MinorUnits.format($0.amount) } == ["-45.50", "-1200.00", "2500.00", "0.01"])
            #expect(history.map(\.runningBalance) == [225_451, 230_001, 350_001, 100_001])
            #expect(history.allSatisfy { $0.accountID == chart.checking.id })
            #expect(try await ledger.accounts.balance(of: chart.checking.id) == 225_451)
            #expect(try await ledger.audit().isConsistent)
        }

        @Test(
            "update changes amount and note and recalculates later running balances", arguments: EngineKind.allCases)
        func updateInPlace(kind: EngineKind) async throws {
            let ledger = try LedgerFixture(kind)
            let chart = try await ledger.seedChart()
            let first = try await ledger.transactions.add(to: chart.savings.id, amount: 1_000, note: "First")
            try await ledger.transactions.add(to: chart.savings.id, amount: 500, note: "Second")
            var edited = first
            edited.amount = 3_000
            edited.note = "First, corrected"
            let saved = try await ledger.transactions.update(transaction: edited, originalAccountID: chart.savings.id)
            #expect(saved.runningBalance == 3_000)
            let history = try await ledger.transactions.transactions(for: chart.savings.id)
            #expect(history.map(\.note) == ["Second", "First, corrected"])
            #expect(history.map(\.runningBalance) == [3_500, 3_000])
            #expect(try await ledger.audit().isConsistent)
        }

        @Test("delete removes the transaction and recalculates", arguments: EngineKind.allCases)
        func deleteTransaction(kind: EngineKind) async throws {
            let ledger = try LedgerFixture(kind)
            let chart = try await ledger.seedChart()
            let rent = try await ledger.transactions.add(to: chart.checking.id, amount: -40_000, note: "Rent")
            try await ledger.transactions.delete(transaction: rent.id)
            #expect(try await ledger.transactions.transactions(for: chart.checking.id).isEmpty)
            #expect(try await ledger.accounts.balance(of: chart.checking.id) == 100_000)
            await #expect(throws: LedgerError.unknownTransaction(rent.id)) {
                try await ledger.transactions.transaction(rent.id)
            }
        }

        @Test("transfer writes two transactions and two balances", arguments: EngineKind.allCases)
        func transfer(kind: EngineKind) async throws {
            let ledger = try LedgerFixture(kind)
            let chart = try await ledger.seedChart()
            let receipt = try await ledger.transactions.transfer(
                from: chart.checking.id, to: chart.wallet.id, amount: 2_000, note: "Cash")
            #expect(receipt.withdrawal.amount == -2_000 && receipt.withdrawal.accountID == chart.checking.id)
            #expect(receipt.deposit.amount == 2_000 && receipt.deposit.accountID == chart.wallet.id)
            #expect(receipt.withdrawal.runningBalance == 98_000 && receipt.deposit.runningBalance == 7_000)
            #expect(try await ledger.accounts.balance(of: chart.checking.id) == 98_000)
            #expect(try await ledger.accounts.balance(of: chart.wallet.id) == 7_000)
            let audit = try await ledger.audit()
            #expect(audit.transactionCount == 2 && audit.isConsistent)
        }

        @Test(
            "invalid amounts, currency mismatches, same-account transfers and overdrafts are refused",
            arguments: EngineKind.allCases)
        func refusals(kind: EngineKind) async throws {
            let ledger = try LedgerFixture(kind)
            let chart = try await ledger.seedChart()
            let before = try await ledger.audit()

            await #expect(throws: LedgerError.self) {
                try await ledger.transactions.add(to: chart.checking.id, amount: 0, note: "Nothing")
            }
            await #expect(throws: LedgerError.self) {
                try await ledger.transactions.transfer(
                    from: chart.checking.id, to: chart.savings.id, amount: -5, note: "Backwards")
            }
            await #expect(throws: LedgerError.sameAccount("Checking")) {
                try await ledger.transactions.transfer(
                    from: chart.checking.id, to: chart.checking.id, amount: 5, note: "Loop")
            }
            await #expect(
                throws: LedgerError.currencyMismatch(
                    source: "Checking", sourceCurrency: "USD", target: "Travel", targetCurrency: "EUR")
            ) {
                try await ledger.transactions.transfer(
                    from: chart.checking.id, to: chart.travel.id, amount: 5, note: "Abroad")
            }
            await #expect(
                throws: LedgerError.insufficientFunds(
                    account: "Wallet", available: 5_000, attemptedBalance: -1_000, currency: "USD")
            ) {
                try await ledger.transactions.add(to: chart.wallet.id, amount: -6_000, note: "Too much")
            }
            let wrongKind = try await ledger.transactions.add(to: chart.checking.id, amount: -1, note: "Fee")
            await #expect(throws: LedgerError.self) { try await ledger.transactions.transactions(for: wrongKind.id) }
            try await ledger.transactions.delete(transaction: wrongKind.id)

            #expect(try await ledger.audit() == before)
            for text in ["", "12.345", "1,000", "abc", "1e3", "99999999999999999999", ".", "-"] {
                #expect(throws: LedgerError.self) { try MinorUnits.parse(text) }
            }
        }
    }
}
