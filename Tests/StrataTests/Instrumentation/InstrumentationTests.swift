import Foundation
import Strata
import Synchronization
import Testing

/// The container's ``Instrumentation`` hook receives real events from real stores, on every engine.
@Suite("Instrumentation")
struct InstrumentationTests {
    /// Saves accounts `names` with no balance and returns their IDs.
    private func saveAccounts(_ names: [String], in container: PersistentContainer) async throws -> [ObjectID] {
        let context = container.newBackgroundContext()
        return try await context.perform {
            let accounts = names.map { name in
                let account = Account(context: context)
                account.name = name
                return account
            }
            try context.save()
            return accounts.map(\.objectID)
        }
    }

    @Test("a save reports its commit with its row counts, per entity", arguments: EngineKind.allCases)
    func commitCounts(kind: EngineKind) async throws {
        let store = try TestStore(kind)
        let log = EventLog()
        let container = try store.open(reportingTo: log)
        defer { container.close() }
        let context = container.newBackgroundContext()
        let (accountID, entryID) = try await context.perform {
            var accounts: [Account] = []
            for name in ["A", "B", "C"] {
                let account = Account(context: context)
                account.name = name
                accounts.append(account)
            }
            var entries: [Entry] = []
            for amount in [10, 20] as [Int64] {
                let entry = Entry(context: context)
                entry.amount = amount
                entries.append(entry)
            }
            try context.save()
            return (accounts[0].objectID, entries[0].objectID)
        }
        let first = try #require(log.commits.first)
        #expect(log.commits.count == 1)
        #expect((first.inserted, first.updated, first.deleted) == (5, 0, 0))
        #expect(first.byEntity["Account"] == .init(inserted: 3, updated: 0, deleted: 0))
        #expect(first.byEntity["Entry"] == .init(inserted: 2, updated: 0, deleted: 0))
        #expect(first.duration >= .zero)
        let allocations = log.engineCalls.filter { $0.operation == .allocateKeys }
        #expect(Set(allocations.map(\.entity)) == ["Account", "Entry"])
        #expect(allocations.map { $0.count ?? 0 }.reduce(0, +) == 5)
        #expect(log.engineCalls.filter { $0.operation == .commit }.count == 1)

        log.clear()
        try await context.perform {
            try context.existingObject(with: accountID, as: Account.self).balance = 99
            context.delete(try context.existingObject(with: entryID, as: Entry.self))
            try context.save()
        }
        let second = try #require(log.commits.first)
        #expect((second.inserted, second.updated, second.deleted) == (0, 1, 1))
        #expect(second.byEntity["Account"] == .init(inserted: 0, updated: 1, deleted: 0))
        #expect(second.byEntity["Entry"] == .init(inserted: 0, updated: 0, deleted: 1))
        #expect(second.retriedCommits == 0)
        let commitCall = try #require(log.engineCalls.last { $0.operation == .commit })
        #expect(commitCall.error == nil)
    }

    @Test("engine calls report their durations, never negative, in the order they ran", arguments: EngineKind.allCases)
    func engineCallDurations(kind: EngineKind) async throws {
        let store = try TestStore(kind)
        let log = EventLog()
        let container = try store.open(reportingTo: log)
        defer { container.close() }
        let ids = try await saveAccounts(["A", "B", "C", "D"], in: container)
        log.clear()
        let context = container.newBackgroundContext()
        let names = try await context.perform {
            let fetched = try context.fetch(FetchRequest<Account>()).count
            let counted = try context.count(for: FetchRequest<Entry>())
            context.reset()
            let looked = try ids.map { try context.existingObject(with: $0, as: Account.self).name }
            return (fetched, counted, looked)
        }
        #expect(names.0 == 4 && names.1 == 0 && names.2 == ["A", "B", "C", "D"])
        let calls = log.engineCalls
        let operations = calls.map(\.operation)
        #expect(operations.first == .snapshot)
        #expect(operations.contains(.fetch) && operations.contains(.count))
        #expect(operations.filter { $0 == .lookup }.count == 4)
        #expect(calls.first { $0.operation == .fetch }?.count == 4)
        #expect(calls.first { $0.operation == .fetch }?.entity == "Account")
        #expect(calls.allSatisfy { $0.duration >= .zero && $0.error == nil })
        // One context's calls run one after another: each starts after the previous one ended.
        for (previous, next) in zip(calls, calls.dropFirst()) {
            #expect(next.startedAt >= previous.startedAt + previous.duration)
        }
    }

    @Test("a failed engine call is reported with its error", arguments: EngineKind.allCases)
    func failedCall(kind: EngineKind) async throws {
        let store = try TestStore(kind)
        let log = EventLog()
        let container = try store.open(reportingTo: log)
        _ = try await saveAccounts(["A"], in: container)
        let context = container.newBackgroundContext()
        container.close()
        log.clear()
        await #expect(throws: StrataError.self) {
            try await context.perform { _ = try context.fetch(FetchRequest<Account>()) }
        }
        let failed = try #require(log.engineCalls.first)
        #expect(failed.error is StrataError)
        #expect(failed.duration >= .zero)
    }
}
