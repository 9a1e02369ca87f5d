import Foundation
import Strata

/// Optimistic conflicts are detected, listed with versions, and nothing is written.
enum ConflictChecks {
    static let all: [ConformanceCheck] = [
        ConformanceCheck(
            "Optimistic conflicts", "a concurrent update makes the later save fail, listing it, and write nothing",
            update),
        ConformanceCheck("Optimistic conflicts", "updating a row another context deleted is a conflict", deleted),
        ConformanceCheck("Optimistic conflicts", "every conflicting object is listed", listsAll),
        ConformanceCheck(
            "Optimistic conflicts", "the store-wins policy keeps stored values and saves the rest", storeWins),
        ConformanceCheck("Optimistic conflicts", "the object-wins policy merges property by property", objectWins),
    ]

    static func update(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        let id = try await container.makeAccount("Shared", balance: 10)
        let other = try await container.makeAccount("Other")
        let late = container.newBackgroundContext()
        try await late.perform { _ = try late.existingObject(with: id, as: KitAccount.self).balance }
        try await container.performUnitOfWork { context in
            try context.existingObject(with: id, as: KitAccount.self).balance = 20
            try context.save()
        }
        let error = try await kit.expectStrataError("the later save") {
            try await late.perform {
                try late.existingObject(with: id, as: KitAccount.self).balance = 30
                try late.existingObject(with: other, as: KitAccount.self).balance = 77
                try late.save()
            }
        }
        guard case .conflict(let conflicts) = error else { throw kit.fail("expected .conflict, got \(error)") }
        try kit.expectEqual(
            conflicts, [VersionConflict(objectID: id, expectedVersion: 1, storedVersion: 2)], "the conflicts")
        let balances = try await container.read {
            try $0.fetch(FetchRequest<KitAccount>(sortBy: [SortDescriptor(\.name)])).map(\.balance)
        }
        try kit.expectEqual(balances, [0, 20], "balances of Other and Shared")
    }

    static func deleted(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        let id = try await container.makeAccount("Gone")
        let late = container.newBackgroundContext()
        try await late.perform { _ = try late.existingObject(with: id, as: KitAccount.self).balance }
        try await container.performUnitOfWork { context in
            context.delete(try context.existingObject(with: id))
            try context.save()
        }
        let error = try await kit.expectStrataError("updating the deleted account") {
            try await late.perform {
                try late.existingObject(with: id, as: KitAccount.self).balance = 1
                try late.save()
            }
        }
        try kit.expectEqual(
            error, .conflict([VersionConflict(objectID: id, expectedVersion: 1, storedVersion: nil)]), "the error")
        try kit.expectEqual(
            try await container.read { try $0.count(for: FetchRequest<KitAccount>()) }, 0, "accounts stored")
    }

    static func listsAll(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        var ids: [ObjectID] = []
        for index in 0..<4 { ids.append(try await container.makeAccount("A\(index)")) }
        let all = ids
        let late = container.newBackgroundContext()
        try await late.perform { for id in all { _ = try late.existingObject(with: id, as: KitAccount.self).balance } }
        try await container.performUnitOfWork { context in
            for id in [all[1], all[3]] { try context.existingObject(with: id, as: KitAccount.self).balance += 1 }
            try context.save()
        }
        let error = try await kit.expectStrataError("saving all four") {
            try await late.perform {
                for id in all { try late.existingObject(with: id, as: KitAccount.self).balance = 9 }
                try late.save()
            }
        }
        guard case .conflict(let conflicts) = error else { throw kit.fail("expected .conflict, got \(error)") }
        try kit.expectEqual(Set(conflicts.map(\.objectID)), [all[1], all[3]], "the conflicting objects")
    }

    /// Two contexts read the same account; the first changes balance and note, the second
    /// changes currency and note (and creates another account) with `policy`.
    static func mergeScenario(_ kit: ConformanceHarness, policy: MergePolicy) async throws -> [String] {
        let container = try kit.open()
        let id = try await container.makeAccount("Merged", balance: 10, note: "original")
        let late = container.newBackgroundContext()
        try await late.perform { _ = try late.existingObject(with: id, as: KitAccount.self).balance }
        try await container.performUnitOfWork { context in
            let account = try context.existingObject(with: id, as: KitAccount.self)
            account.balance = 20
            account.note = "first"
            try context.save()
        }
        try await late.perform {
            late.mergePolicy = policy
            let account = try late.existingObject(with: id, as: KitAccount.self)
            account.currency = "USD"
            account.note = "second"
            KitAccount(context: late).name = "Extra"
            try late.save()
        }
        return try await container.read { context in
            try context.fetch(FetchRequest<KitAccount>(sortBy: [SortDescriptor(\.name)])).map {
                "\($0.name)|\($0.balance)|\($0.currency)|\($0.note ?? "nil")"
            }
        }
    }

    static func storeWins(_ kit: ConformanceHarness) async throws {
        let rows = try await mergeScenario(kit, policy: .storeWins)
        try kit.expectEqual(rows, ["Extra|0|EUR|nil", "Merged|20|EUR|first"], "accounts after a store-wins save")
    }

    static func objectWins(_ kit: ConformanceHarness) async throws {
        let rows = try await mergeScenario(kit, policy: .objectWins)
        try kit.expectEqual(rows, ["Extra|0|EUR|nil", "Merged|20|USD|second"], "accounts after an object-wins save")
    }
}
