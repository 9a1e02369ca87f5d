import Foundation
import Strata
import Testing

/// Saves are atomic, version-checked, and keep the context's changes when they fail.
@Suite("atomic saves and conflicts")
struct SaveTests {
    @Test("a two-object change saves completely or not at all", arguments: EngineKind.allCases)
    func twoObjectChangeIsAtomic(kind: EngineKind) async throws {
        let store = try TestStore(kind)
        let container = try store.open()
        let (fromID, toID) = try await container.performUnitOfWork { context in
            let from = Account(context: context)
            from.name = "From"
            from.balance = 500
            let to = Account(context: context)
            to.name = "To"
            try context.save()
            return (from.objectID, to.objectID)
        }
        // A transfer whose second half breaks a uniqueness constraint: nothing may be written.
        let context = container.newBackgroundContext()
        let error = await #expect(throws: StrataError.self) {
            try await context.perform {
                let from = try context.existingObject(with: fromID, as: Account.self)
                let to = try context.existingObject(with: toID, as: Account.self)
                from.balance -= 200
                to.balance += 200
                to.name = "From"
                try context.save()
            }
        }
        guard case .constraintViolation(let entity, let attributes)? = error else {
            Issue.record("expected a constraint violation, got \(String(describing: error))")
            return
        }
        #expect(entity == "Account")
        #expect(attributes == ["name"])
        // The failed context keeps its changes.
        let stillDirty = try await context.perform { context.hasChanges && context.updatedObjects.count == 2 }
        #expect(stillDirty)
        let fresh = container.newBackgroundContext()
        let stored = try await fresh.perform {
            try fresh.fetch(FetchRequest<Account>(sortBy: [SortDescriptor(\.name)])).map { "\($0.name)=\($0.balance)" }
        }
        #expect(stored == ["From=500", "To=0"])

        // Fixing the name lets the same context save both halves together.
        try await context.perform {
            try context.existingObject(with: toID, as: Account.self).name = "To"
            try context.save()
        }
        let check = container.newBackgroundContext()
        let final = try await check.perform {
            try check.fetch(FetchRequest<Account>(sortBy: [SortDescriptor(\.name)])).map { "\($0.name)=\($0.balance)" }
        }
        #expect(final == ["From=300", "To=200"])
    }

    @Test("a concurrent change to the same row makes the later save fail and write nothing", arguments: EngineKind.allCases)
    func concurrentChangeConflicts(kind: EngineKind) async throws {
        let store = try TestStore(kind)
        let container = try store.open()
        let (id, otherID) = try await container.performUnitOfWork { context in
            let account = Account(context: context)
            account.name = "Shared"
            account.balance = 10
            let other = Account(context: context)
            other.name = "Other"
            try context.save()
            return (account.objectID, other.objectID)
        }
        let first = container.newBackgroundContext()
        let second = container.newBackgroundContext()
        // Both read version 1.
        try await first.perform { _ = try first.existingObject(with: id, as: Account.self).balance }
        try await second.perform { _ = try second.existingObject(with: id, as: Account.self).balance }
        try await first.perform {
            try first.existingObject(with: id, as: Account.self).balance = 20
            try first.save()
        }
        let error = await #expect(throws: StrataError.self) {
            try await second.perform {
                try second.existingObject(with: id, as: Account.self).balance = 30
                try second.existingObject(with: otherID, as: Account.self).balance = 77
                try second.save()
            }
        }
        guard case .conflict(let conflicts)? = error else {
            Issue.record("expected a conflict, got \(String(describing: error))")
            return
        }
        #expect(conflicts.map(\.objectID) == [id])
        #expect(conflicts.first?.expectedVersion == 1)
        #expect(conflicts.first?.storedVersion == 2)
        let check = container.newBackgroundContext()
        let balances = try await check.perform {
            try check.fetch(FetchRequest<Account>(sortBy: [SortDescriptor(\.name)])).map(\.balance)
        }
        #expect(balances == [0, 20])
    }

    @Test("performUnitOfWork re-runs a conflicting unit of work in a fresh context", arguments: EngineKind.allCases)
    func unitOfWorkRetries(kind: EngineKind) async throws {
        let store = try TestStore(kind)
        let container = try store.open()
        let id = try await container.performUnitOfWork { context in
            let account = Account(context: context)
            account.name = "Counter"
            try context.save()
            return account.objectID
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    for _ in 0..<25 {
                        try await container.performUnitOfWork { context in
                            try context.existingObject(with: id, as: Account.self).balance += 1
                            try context.save()
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        let check = container.newBackgroundContext()
        let total = try await check.perform { try check.existingObject(with: id, as: Account.self).balance }
        #expect(total == 200)
    }

    @Test("NaN is refused at save with a validation error", arguments: EngineKind.allCases)
    func nanIsRefused(kind: EngineKind) async throws {
        let store = try TestStore(kind)
        let container = try store.open()
        let context = container.newBackgroundContext()
        let error = await #expect(throws: StrataError.self) {
            try await context.perform {
                Sample(context: context).double = .nan
                try context.save()
            }
        }
        guard case .validation(let issues)? = error else {
            Issue.record("expected validation, got \(String(describing: error))")
            return
        }
        #expect(issues.map(\.property) == ["double"])
    }
}
