import Foundation
import Strata
import Testing

/// Saves of thousands of changed objects through the public API (issue 25: PostgreSQL writes
/// them set-wise), on every engine: a concurrent writer's change among them is still a conflict,
/// and unique values move between objects within one save as they did row by row.
@Suite("bulk saves")
struct BulkSaveTests {
    static let count = 5_000

    /// A store of accounts `a0`…`a<count - 1>`, balance = index.
    static func seeded(_ kind: EngineKind) async throws -> (TestStore, PersistentContainer) {
        let store = try TestStore(kind)
        let container = try store.open()
        let context = container.newBackgroundContext()
        try await context.perform {
            for index in 0..<Self.count {
                let account = Account(context: context)
                account.name = "a\(index)"
                account.balance = Int64(index)
            }
            try context.save()
        }
        return (store, container)
    }

    /// Every account's name and balance, read in a fresh context.
    static func stored(_ container: PersistentContainer) async throws -> [String: Int64] {
        let context = container.newBackgroundContext()
        return try await context.perform {
            Dictionary(uniqueKeysWithValues: try context.fetch(FetchRequest<Account>()).map { ($0.name, $0.balance) })
        }
    }

    @Test(
        "a concurrent writer's change to one of 5,000 updated objects: .conflict naming it, nothing written",
        arguments: EngineKind.allCases)
    func concurrentWriterInALargeUpdate(kind: EngineKind) async throws {
        let (store, container) = try await Self.seeded(kind)
        defer { container.close() }
        _ = store
        let context = container.newBackgroundContext()
        let other = container.newBackgroundContext()
        try await context.perform {
            for account in try context.fetch(FetchRequest<Account>()) { account.balance += 1_000 }
        }
        // Another context changes one of them and saves first.
        try await other.perform {
            let victim = try other.fetch(FetchRequest<Account>(predicate: #Predicate { $0.name == "a4321" }))
            try #require(victim.count == 1)
            victim[0].balance = -1
            try other.save()
        }
        let error: StrataError? = try await context.perform {
            do {
                try context.save()
                return nil
            } catch let error as StrataError {
                return error
            } catch {
                Issue.record("unexpected \(error)")
                return nil
            }
        }
        guard case .conflict(let conflicts)? = error else {
            Issue.record("expected .conflict, got \(String(describing: error))")
            return
        }
        #expect(conflicts.count == 1)
        #expect(conflicts.first?.expectedVersion == 1)
        #expect(conflicts.first?.storedVersion == 2)
        var expected = Dictionary(uniqueKeysWithValues: (0..<Self.count).map { ("a\($0)", Int64($0)) })
        expected["a4321"] = -1
        #expect(try await Self.stored(container) == expected)
    }

    @Test(
        "5,000 objects each taking the unique name the next one gives up, in one save: stored",
        arguments: EngineKind.allCases)
    func uniqueNamesMoveAlongAChain(kind: EngineKind) async throws {
        let (store, container) = try await Self.seeded(kind)
        defer { container.close() }
        _ = store
        let context = container.newBackgroundContext()
        try await context.perform {
            let accounts = try context.fetch(FetchRequest<Account>(sortBy: [SortDescriptor(\.balance)]))
            // The last gives its name up first, for a new one; then each takes the next one's:
            // row by row in this order no two rows ever hold the same name.
            for index in accounts.indices.reversed() {
                accounts[index].name = index == accounts.count - 1 ? "last" : "a\(index + 1)"
            }
            try context.save()
        }
        var expected = Dictionary(uniqueKeysWithValues: (1..<Self.count).map { ("a\($0)", Int64($0 - 1)) })
        expected["last"] = Int64(Self.count - 1)
        #expect(try await Self.stored(container) == expected)
    }

    @Test(
        "two objects swapping their unique names in one save: .constraintViolation on name, nothing written",
        arguments: EngineKind.allCases)
    func swapIsAConstraintViolation(kind: EngineKind) async throws {
        let (store, container) = try await Self.seeded(kind)
        defer { container.close() }
        _ = store
        let context = container.newBackgroundContext()
        let error: StrataError? = try await context.perform {
            do {
                let first = try context.fetch(FetchRequest<Account>(predicate: #Predicate { $0.name == "a1" }))
                let second = try context.fetch(FetchRequest<Account>(predicate: #Predicate { $0.name == "a2" }))
                first[0].name = "a2"
                second[0].name = "a1"
                try context.save()
                return nil
            } catch let error as StrataError {
                return error
            } catch {
                Issue.record("unexpected \(error)")
                return nil
            }
        }
        guard case .constraintViolation(let entity, let attributes, _)? = error else {
            Issue.record("expected .constraintViolation, got \(String(describing: error))")
            return
        }
        #expect(entity == "Account")
        #expect(attributes == ["name"])
        let expected = Dictionary(uniqueKeysWithValues: (0..<Self.count).map { ("a\($0)", Int64($0)) })
        #expect(try await Self.stored(container) == expected)
    }
}
