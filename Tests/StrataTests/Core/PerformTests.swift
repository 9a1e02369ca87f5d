import Foundation
import Strata
import Testing

/// `perform` runs off the main thread, on the context's queue, and a failed unit of work
/// leaves nothing behind for the next one.
@Suite("perform and context lifetime")
struct PerformTests {
    @Test("perform never runs on the main thread", arguments: EngineKind.allCases)
    func performRunsOffMain(kind: EngineKind) async throws {
        let store = try TestStore(kind)
        let container = try store.open()
        let context = container.newBackgroundContext()
        let (isMain, inside) = try await context.perform { (Thread.isMainThread, context.isInsidePerform) }
        #expect(isMain == false)
        #expect(inside == true)
        #expect(context.isInsidePerform == false)
    }

    @Test("perform from a main-actor caller still runs off the main thread", arguments: EngineKind.allCases)
    @MainActor
    func performFromMainActor(kind: EngineKind) async throws {
        let store = try TestStore(kind)
        let container = try store.open()
        let context = container.newBackgroundContext()
        let isMain = try await context.perform { Thread.isMainThread }
        #expect(isMain == false)
    }

    @Test("a failed operation's unsaved changes do not reach a fresh context", arguments: EngineKind.allCases)
    func failedOperationLeavesNoTrace(kind: EngineKind) async throws {
        struct Boom: Error {}
        let store = try TestStore(kind)
        let container = try store.open()
        let id = try await container.performUnitOfWork { context in
            let account = Account(context: context)
            account.name = "Checking"
            account.balance = 100
            try context.save()
            return account.objectID
        }
        let failing = container.newBackgroundContext()
        await #expect(throws: Boom.self) {
            try await failing.perform {
                let account = try failing.existingObject(with: id, as: Account.self)
                account.balance = 999_999
                Account(context: failing).name = "Ghost"
                throw Boom()
            }
        }
        let fresh = container.newBackgroundContext()
        let (balance, names, hasChanges) = try await fresh.perform {
            let account = try fresh.existingObject(with: id, as: Account.self)
            let names = try fresh.fetch(FetchRequest<Account>()).map(\.name)
            return (account.balance, names, fresh.hasChanges)
        }
        #expect(balance == 100)
        #expect(names == ["Checking"])
        #expect(hasChanges == false)
    }

    @Test("all reads inside one perform see one snapshot", arguments: EngineKind.allCases)
    func readsShareOneSnapshot(kind: EngineKind) async throws {
        let store = try TestStore(kind)
        let container = try store.open()
        try await container.performUnitOfWork { context in
            Account(context: context).name = "A"
            try context.save()
        }
        let reader = container.newBackgroundContext()
        let writer = container.newBackgroundContext()
        let counts = try await reader.perform {
            let before = try reader.count(for: FetchRequest<Account>())
            // Another context commits while this perform is running.
            let semaphore = DispatchSemaphore(value: 0)
            Task {
                try await writer.perform {
                    Account(context: writer).name = "B"
                    try writer.save()
                }
                semaphore.signal()
            }
            semaphore.wait()
            let after = try reader.count(for: FetchRequest<Account>())
            let names = try reader.fetch(FetchRequest<Account>()).map(\.name)
            return (before, after, names)
        }
        #expect(counts.0 == 1)
        #expect(counts.1 == 1)
        #expect(counts.2 == ["A"])
        let later = try await reader.perform { try reader.count(for: FetchRequest<Account>()) }
        #expect(later == 2)
    }
}
