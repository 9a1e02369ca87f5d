import Foundation
import Strata
import Testing

/// The core's history path end to end on each engine: saves record history, the container
/// reads it, observers see commits in order, and query observation suppresses duplicates.
@Suite("history smoke")
struct HistorySmokeTests {
    @Test(arguments: EngineKind.allCases)
    func savesRecordHistory(kind: EngineKind) async throws {
        let store = try TestStore(kind)
        let container = try store.open()
        let start = try await container.currentHistoryToken()
        let context = container.newBackgroundContext(named: "writer")
        context.transactionAuthor = "importer"
        let id = try await context.perform {
            let account = Account(context: context)
            account.name = "a"
            try context.save()
            account.balance = 5
            try context.save()
            let entry = Entry(context: context)
            entry.account = account
            try context.save()
            return account.objectID
        }
        let history = try await container.history(after: start)
        #expect(history.count == 3)
        #expect(history.map(\.author) == ["importer", "importer", "importer"])
        #expect(history[0].changes.map(\.kind) == [.insert])
        #expect(history[0].changes.first?.objectID == id)
        #expect(
            history[0].changes.first?.changedProperties == ["name", "currency", "balance", "note", "entries", "tags"])
        #expect(history[1].changes.first?.changedProperties == ["balance"])
        let third = history[2].changes.sorted { $0.objectID.entityName < $1.objectID.entityName }
        #expect(third.map(\.kind) == [.update, .insert])
        #expect(third.first?.changedProperties == ["entries"])
        let onlyEntries = try await container.history(after: start, entities: [Entry.self])
        #expect(onlyEntries.map(\.token) == [history[2].token])
    }

    /// One save that changes different attributes of objects in turn: each change names its own
    /// (the history groups objects that changed the same ones, and must not carry one object's
    /// names over to the next).
    @Test(arguments: EngineKind.allCases)
    func eachUpdateNamesItsOwnProperties(kind: EngineKind) async throws {
        let store = try TestStore(kind)
        let container = try store.open()
        let context = container.newBackgroundContext()
        let names = (0..<6).map { "account \($0)" }
        try await context.perform {
            for name in names { Account(context: context).name = name }
            try context.save()
        }
        let changes = try await Self.changesOfOneSave(context, container) {
            let accounts = try context.fetch(FetchRequest<Account>(sortBy: [SortDescriptor(\.name)]))
            for (index, account) in accounts.enumerated() {
                switch index {
                case 0, 1, 4: account.balance = 5
                case 2: account.note = "n"
                default:
                    account.balance = 7
                    account.note = "m"
                }
            }
        }
        let byName = try await context.perform {
            try changes.map { change in
                let account = try context.existingObject(with: change.objectID, as: Account.self)
                return "\(account.name): \(change.changedProperties.sorted())"
            }.sorted()
        }
        #expect(
            byName == [
                "account 0: [\"balance\"]", "account 1: [\"balance\"]", "account 2: [\"note\"]",
                "account 3: [\"balance\", \"note\"]", "account 4: [\"balance\"]", "account 5: [\"balance\", \"note\"]",
            ])
    }

    /// One save that changes the second column of objects of two entities (an account's
    /// `currency`, an entry's `memo`): each change names its own entity's property, though both
    /// changed the same column position (the history shares names between objects that changed
    /// the same columns of the same entity only).
    @Test(arguments: EngineKind.allCases)
    func sameColumnOfTwoEntitiesNamesEach(kind: EngineKind) async throws {
        let store = try TestStore(kind)
        let container = try store.open()
        let context = container.newBackgroundContext()
        try await context.perform {
            for index in 0..<3 {
                let account = Account(context: context)
                account.name = "account \(index)"
                let entry = Entry(context: context)
                entry.account = account
                entry.amount = Int64(index)
            }
            try context.save()
        }
        let changes = try await Self.changesOfOneSave(context, container) {
            let accounts = try context.fetch(FetchRequest<Account>())
            let entries = try context.fetch(FetchRequest<Entry>())
            for (account, entry) in zip(accounts, entries) {
                account.currency = "USD"
                entry.memo = "moved"
            }
        }
        let named = changes.map { "\($0.objectID.entityName): \($0.changedProperties.sorted())" }.sorted()
        #expect(
            named == [
                "Account: [\"currency\"]", "Account: [\"currency\"]", "Account: [\"currency\"]",
                "Entry: [\"memo\"]", "Entry: [\"memo\"]", "Entry: [\"memo\"]",
            ])
    }

    /// The changes history records for one save of `context`: `edit` runs inside its `perform`,
    /// then the save, and the first transaction after it is read back from `container`.
    private static func changesOfOneSave(
        _ context: ObjectContext, _ container: PersistentContainer, _ edit: @escaping @Sendable () throws -> Void
    ) async throws -> [PersistentHistoryChange] {
        let start = try await container.currentHistoryToken()
        try await context.perform {
            try edit()
            try context.save()
        }
        return try #require(try await container.history(after: start).first).changes
    }

    @Test(arguments: EngineKind.allCases)
    func observerSeesCommitsInOrder(kind: EngineKind) async throws {
        let store = try TestStore(kind)
        let container = try store.open()
        let changes = container.changes()
        let reader = Task {
            var tokens: [HistoryToken] = []
            for try await transaction in changes {
                tokens.append(transaction.token)
                if tokens.count == 20 { break }
            }
            return tokens
        }
        for index in 0..<20 {
            let context = container.newBackgroundContext()
            try await context.perform {
                Account(context: context).name = "a\(index)"
                try context.save()
            }
        }
        let tokens = try await reader.value
        #expect(tokens.count == 20)
        #expect(tokens == tokens.sorted())
        #expect(Set(tokens).count == 20)
    }

    @Test(arguments: EngineKind.allCases)
    func queryObservationSkipsEqualResults(kind: EngineKind) async throws {
        let store = try TestStore(kind)
        let container = try store.open()
        let observation = container.observe { context in try context.count(for: FetchRequest<Account>()) }
        var iterator = observation.makeAsyncIterator()
        #expect(try await iterator.next() == 0)
        let context = container.newBackgroundContext()
        try await context.perform {
            Account(context: context).name = "x"
            try context.save()
        }
        #expect(try await iterator.next() == 1)
        try await context.perform {
            let account = try context.fetch(FetchRequest<Account>())[0]
            account.balance = 9 // the count stays 1: not delivered
            try context.save()
            Account(context: context).name = "y"
            try context.save()
        }
        #expect(try await iterator.next() == 2)
    }
}
