import Foundation
import Ledger
import Strata
import Testing

extension LedgerTests {
    /// `LedgerWatcher` turns each commit of the ledger's services into the changes a reader
    /// notices, read right after the commit: postings with their running balance, edits, removals
    /// and closings from their tombstones, and account lines only where no posting shows them.
    @Suite("ledger: the watcher describes each commit")
    struct LedgerWatcherTests {
        @Test("every kind of ledger change, one commit at a time", arguments: EngineKind.allCases)
        func describesEveryKindOfChange(kind: EngineKind) async throws {
            let store = try TestStore(kind)
            let container = try PersistentContainer(ledger: store.configuration)
            let accounts = AccountService(contexts: container)
            let transactions = TransactionService(contexts: container)
            let watcher = LedgerWatcher(container: container)
            var updates = watcher.updates(after: try await watcher.currentToken()).makeAsyncIterator()
            func next() async throws -> [LedgerChange] {
                let update = try #require(try await updates.next())
                return update.changes.map { change in
                    var change = change
                    change.objectID = ""
                    return change
                }
            }

            let checking = try await accounts.create(name: "Checking", currency: "USD", openingBalance: 150_000)
            #expect(try await next() == [opened("Checking", 150_000)])
            let savings = try await accounts.create(name: "Savings", currency: "USD")
            #expect(try await next() == [opened("Savings", 0)])

            try await transactions.transfer(from: checking.id, to: savings.id, amount: 20_000, note: "Rainy day")
            #expect(
                try await next() == [
                    LedgerChange(
                        kind: .posted, objectID: "", account: "Checking", currency: "USD", amount: -20_000,
                        balance: 130_000, note: "Rainy day"),
                    LedgerChange(
                        kind: .posted, objectID: "", account: "Savings", currency: "USD", amount: 20_000,
                        balance: 20_000, note: "Rainy day"),
                ])

            let lunch = try await transactions.add(to: checking.id, amount: -1_250, note: "Lunch")
            #expect(
                try await next() == [
                    LedgerChange(
                        kind: .posted, objectID: "", account: "Checking", currency: "USD", amount: -1_250,
                        balance: 128_750, note: "Lunch")
                ])

            // A move: the transaction's line shows its new account; the old one gets a balance line.
            var moved = lunch
            moved.accountID = savings.id
            try await transactions.update(transaction: moved, originalAccountID: checking.id)
            #expect(
                try await next() == [
                    LedgerChange(
                        kind: .edited, objectID: "", account: "Savings", currency: "USD", amount: -1_250,
                        balance: 18_750, note: "Lunch"),
                    LedgerChange(
                        kind: .accountChanged, objectID: "", account: "Checking", currency: "USD", balance: 130_000),
                ])

            // A removal: amount and note come from the tombstone (`.preserveAfterDeletion`).
            try await transactions.delete(transaction: lunch.id)
            let removal = try #require(try await updates.next())
            #expect(removal.changes.first?.objectID == lunch.id)
            #expect(
                removal.changes.map(\.kind) == [.removed, .accountChanged]
                    && removal.changes[0]
                        == LedgerChange(kind: .removed, objectID: lunch.id, amount: -1_250, note: "Lunch")
                    && removal.changes[1].account == "Savings" && removal.changes[1].balance == 20_000,
                "\(removal.changes)")

            let temporary = try await accounts.create(name: "Temp", currency: "EUR")
            #expect(try await next() == [opened("Temp", 0, currency: "EUR")])
            try await accounts.delete(temporary.id)
            #expect(try await next() == [LedgerChange(kind: .closed, objectID: "", account: "Temp", currency: "EUR")])
        }

        @Test(
            "a transaction deleted before the watcher reads its commit is reported as such",
            arguments: EngineKind.allCases)
        func postingDeletedSince(kind: EngineKind) async throws {
            let store = try TestStore(kind)
            let container = try PersistentContainer(ledger: store.configuration)
            let accounts = AccountService(contexts: container)
            let transactions = TransactionService(contexts: container)
            let checking = try await accounts.create(name: "Checking", currency: "USD", openingBalance: 10_000)
            let start = try await container.currentHistoryToken()
            let coffee = try await transactions.add(to: checking.id, amount: -450, note: "Coffee")
            try await transactions.delete(transaction: coffee.id)

            let watcher = LedgerWatcher(container: container)
            var described: [LedgerUpdate] = []
            for transaction in try await container.history(after: start) {
                described.append(try await watcher.update(for: transaction))
            }
            #expect(described.count == 2)
            // The posting's commit, read after the deletion: the transaction is gone, so only its
            // ID is known; the account's line shows the balance as it is now.
            #expect(
                described.first?.changes == [
                    LedgerChange(kind: .posted, objectID: coffee.id),
                    LedgerChange(
                        kind: .accountChanged, objectID: checking.id, account: "Checking", currency: "USD",
                        balance: 10_000),
                ])
            #expect(
                described.last?.changes.first
                    == LedgerChange(kind: .removed, objectID: coffee.id, amount: -450, note: "Coffee"))
        }

        private func opened(_ name: String, _ opening: Int64, currency: String = "USD") -> LedgerChange {
            LedgerChange(
                kind: .opened, objectID: "", account: name, currency: currency, amount: opening, balance: opening)
        }
    }
}
