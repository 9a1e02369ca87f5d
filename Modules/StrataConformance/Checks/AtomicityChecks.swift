import Foundation
import Strata

/// A save commits all of its changes or none of them.
enum AtomicityChecks {
    static let all: [ConformanceCheck] = [
        ConformanceCheck("Atomicity", "a two-object change saves completely or not at all", twoObjects),
        ConformanceCheck("Atomicity", "a 400-row commit with one stale row leaves no trace of the others", failsLate),
    ]

    static func twoObjects(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        let from = try await container.makeAccount("From", balance: 500)
        let to = try await container.makeAccount("To")
        let context = container.newBackgroundContext()
        let error = try await kit.expectStrataError("a transfer whose second half breaks a constraint") {
            try await context.perform {
                let source = try context.existingObject(with: from, as: KitAccount.self)
                let target = try context.existingObject(with: to, as: KitAccount.self)
                source.balance -= 200
                target.balance += 200
                target.name = "From"
                try context.save()
            }
        }
        try kit.expectEqual(
            error.withoutNative, .constraintViolation(entity: "Account", attributes: ["name"]), "the error")
        try kit.expect(
            try await context.perform { context.hasChanges && context.updatedObjects.count == 2 },
            "the failed context keeps both changes")
        let before = try await container.read {
            try $0.fetch(FetchRequest<KitAccount>(sortBy: [SortDescriptor(\.name)])).map { "\($0.name)=\($0.balance)" }
        }
        try kit.expectEqual(before, ["From=500", "To=0"], "stored accounts after the failed save")
        try await context.perform {
            try context.existingObject(with: to, as: KitAccount.self).name = "To"
            try context.save()
        }
        let after = try await container.read {
            try $0.fetch(FetchRequest<KitAccount>(sortBy: [SortDescriptor(\.name)])).map { "\($0.name)=\($0.balance)" }
        }
        try kit.expectEqual(after, ["From=300", "To=200"], "stored accounts after fixing and saving again")
    }

    static func failsLate(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        try await failLargeStaleSave(kit, in: container)
        let counts = try await container.read { context in
            [try context.count(for: FetchRequest<KitAccount>()), try context.count(for: FetchRequest<KitEntry>())]
        }
        try kit.expectEqual(counts, [1, 0], "accounts and entries stored after the failed save")
    }

    /// The late failure both atomicity groups check: makes account "Shared", reads it in a
    /// context, changes it through another, runs `beforeFailing`, then has the first context
    /// insert 200 accounts with an entry each and change the stale account, and expects that
    /// save to throw.
    static func failLargeStaleSave(
        _ kit: ConformanceHarness, in container: PersistentContainer,
        beforeFailing: () async throws -> Void = {}
    ) async throws {
        let shared = try await container.makeAccount("Shared")
        let stale = container.newBackgroundContext()
        try await stale.perform { _ = try stale.existingObject(with: shared, as: KitAccount.self).balance }
        try await container.performUnitOfWork { context in
            try context.existingObject(with: shared, as: KitAccount.self).balance = 1
            try context.save()
        }
        try await beforeFailing()
        _ = try await kit.expectStrataError("a large save that touches one stale row") {
            try await stale.perform {
                for index in 0..<200 {
                    let account = KitAccount(context: stale)
                    account.name = "bulk-\(index)"
                    let entry = KitEntry(context: stale)
                    entry.account = account
                }
                try stale.existingObject(with: shared, as: KitAccount.self).balance = 2
                try stale.save()
            }
        }
    }
}
