import Foundation
import Ledger
import Testing

extension LedgerTests {
    /// Version 2's `category`: given, suggested by the note, or set by a transfer; kept by update.
    @Suite("ledger: transaction categories")
    struct TransactionCategoryTests {
        @Test(
            "add takes a category or the note's, transfer sets its own, update changes it",
            arguments: EngineKind.allCases)
        func categories(kind: EngineKind) async throws {
            let ledger = try LedgerFixture(kind)
            let chart = try await ledger.seedChart()
            let transactions = ledger.transactions

            let rent = try await transactions.add(to: chart.checking.id, amount: -90_000, note: "April rent")
            let gift = try await transactions.add(to: chart.checking.id, amount: -2_000, note: "Gift for Ann")
            let book = try await transactions.add(
                to: chart.checking.id, amount: -1_500, note: "Lunch money", category: "books")
            let receipt = try await transactions.transfer(
                from: chart.checking.id, to: chart.savings.id, amount: 500, note: "Rainy day")
            #expect([rent.category, gift.category, book.category] == ["housing", nil, "books"])
            #expect([receipt.withdrawal.category, receipt.deposit.category] == ["transfer", "transfer"])

            var edited = gift
            edited.category = "presents"
            try await transactions.update(transaction: edited, originalAccountID: chart.checking.id)
            let stored = try await transactions.transactions(for: chart.checking.id)
            #expect(stored.first { $0.id == gift.id }?.category == "presents")
            #expect(stored.first { $0.id == rent.id }?.category == "housing")
        }

        @Test("a note suggests a category by whole words, whatever their case")
        func suggestions() {
            #expect(LedgerTransaction.suggestedCategory(forNote: "Weekly GROCERIES") == "groceries")
            #expect(LedgerTransaction.suggestedCategory(forNote: "taxi, then dinner") == "travel")
            #expect(LedgerTransaction.suggestedCategory(forNote: "Parental leave") == nil) // no "rent" inside words
            #expect(LedgerTransaction.suggestedCategory(forNote: "") == nil)
        }
    }
}
