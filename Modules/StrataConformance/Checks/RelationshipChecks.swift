import Foundation
import Strata

/// Inverses stay in sync in both directions; every delete rule holds.
enum RelationshipChecks {
    static let all: [ConformanceCheck] =
        [
            ConformanceCheck(
                "Relationships", "to-one and to-many inverses stay in sync before and after save", inverses),
            ConformanceCheck("Relationships", "one-to-one inverses stay in sync", oneToOne),
            ConformanceCheck("Relationships", "many-to-many links are stored and both sides agree", manyToMany),
            ConformanceCheck("Relationships", "deny refuses the delete and writes nothing", deny),
            ConformanceCheck(
                "Relationships", "cascade deletes the targets; nullify clears the inverse", cascadeAndNullify),
        ] + RelatedObjectsChecks.all

    static func inverses(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        let context = container.newBackgroundContext()
        let (ids, inMemory) = try await context.perform {
            let checking = KitAccount(context: context)
            checking.name = "Checking"
            let savings = KitAccount(context: context)
            savings.name = "Savings"
            let entry = KitEntry(context: context)
            entry.account = checking
            var log = [checking.entries.contains(entry), checking.entries.count == 1]
            savings.entries.insert(entry)
            log += [
                entry.account === savings, !checking.entries.contains(entry), savings.entries.allObjects == [entry],
            ]
            savings.entries.remove(entry)
            log += [entry.account == nil, savings.entries.isEmpty]
            checking.entries.insert(entry)
            try context.save()
            return ((checking.objectID, savings.objectID, entry.objectID), log)
        }
        try kit.expect(!inMemory.contains(false), "in-memory inverse sync steps: \(inMemory)")
        let loaded = try await container.read { context in
            let checking = try context.existingObject(with: ids.0, as: KitAccount.self)
            let entry = try context.existingObject(with: ids.2, as: KitEntry.self)
            return [
                checking.entries.map(\.objectID) == [ids.2], entry.account?.objectID == ids.0, entry.$account == ids.0,
            ]
        }
        try kit.expect(!loaded.contains(false), "a fresh context loads the saved graph lazily: \(loaded)")
        let moved = try await container.performUnitOfWork { context in
            let checking = try context.existingObject(with: ids.0, as: KitAccount.self)
            let savings = try context.existingObject(with: ids.1, as: KitAccount.self)
            let entry = try context.existingObject(with: ids.2, as: KitEntry.self)
            _ = checking.entries.count
            entry.account = savings
            let counts = [checking.entries.count, savings.entries.count]
            try context.save()
            return counts
        }
        try kit.expectEqual(moved, [0, 1], "entry counts right after moving the entry")
        let stored = try await container.read { context in
            [
                try context.existingObject(with: ids.0, as: KitAccount.self).entries.count,
                try context.existingObject(with: ids.1, as: KitAccount.self).entries.count,
            ]
        }
        try kit.expectEqual(stored, [0, 1], "entry counts after saving the move")
    }

    static func oneToOne(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        let ids = try await container.performUnitOfWork { context in
            let ann = KitOwner(context: context)
            let bob = KitOwner(context: context)
            let passport = KitPassport(context: context)
            ann.passport = passport
            bob.passport = passport
            guard passport.holder === bob, ann.passport == nil else {
                throw StrataError.misuse("one-to-one sync failed in memory")
            }
            try context.save()
            return (ann.objectID, bob.objectID, passport.objectID)
        }
        let stored = try await container.read { context in
            (
                try context.existingObject(with: ids.0, as: KitOwner.self).passport == nil,
                try context.existingObject(with: ids.2, as: KitPassport.self).holder?.objectID == ids.1
            )
        }
        try kit.expect(stored.0 && stored.1, "after saving, the passport belongs to the second owner only")
    }

    static func manyToMany(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        let (accountID, tagIDs) = try await container.performUnitOfWork { context in
            let account = KitAccount(context: context)
            account.name = "Tagged"
            let tags = (0..<3).map { index -> KitTag in
                let tag = KitTag(context: context)
                tag.label = "tag\(index)"
                return tag
            }
            account.tags.insert(tags[0])
            tags[1].accounts.insert(account)
            account.tags.insert(tags[2])
            account.tags.remove(tags[2])
            try context.save()
            return (account.objectID, tags.map(\.objectID))
        }
        let (labels, backlinks) = try await container.read { context in
            let account = try context.existingObject(with: accountID, as: KitAccount.self)
            return (
                account.tags.map(\.label).sorted(),
                try tagIDs.map { try context.existingObject(with: $0, as: KitTag.self).accounts.count }
            )
        }
        try kit.expectEqual(labels, ["tag0", "tag1"], "the account's tags")
        try kit.expectEqual(backlinks, [1, 1, 0], "each tag's accounts")
        // Removing a saved link, and deleting a linked object, both drop the link.
        try await container.performUnitOfWork { context in
            let account = try context.existingObject(with: accountID, as: KitAccount.self)
            account.tags.remove(try context.existingObject(with: tagIDs[0], as: KitTag.self))
            context.delete(try context.existingObject(with: tagIDs[1]))
            try context.save()
        }
        let remaining = try await container.read {
            try $0.existingObject(with: accountID, as: KitAccount.self).tags.count
        }
        try kit.expectEqual(remaining, 0, "tags left after unlinking one and deleting the other")
    }

    static func deny(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        let ids = try await container.performUnitOfWork { context in
            let account = KitAccount(context: context)
            account.name = "Denied"
            let entry = KitEntry(context: context)
            entry.account = account
            try context.save()
            return (account.objectID, entry.objectID)
        }
        let context = container.newBackgroundContext()
        let error = try await kit.expectStrataError("deleting an account that has entries") {
            try await context.perform {
                context.delete(try context.existingObject(with: ids.0))
                try context.save()
            }
        }
        guard case .validation(let issues) = error else { throw kit.fail("expected .validation, got \(error)") }
        try kit.expectEqual(issues.map(\.property), ["entries"], "the property the deny rule names")
        try kit.expectEqual(
            try await container.read { try $0.count(for: FetchRequest<KitAccount>()) }, 1, "accounts stored")
        try await container.performUnitOfWork { context in
            context.delete(try context.existingObject(with: ids.1))
            context.delete(try context.existingObject(with: ids.0))
            try context.save()
        }
        try kit.expectEqual(
            try await container.read { try $0.count(for: FetchRequest<KitAccount>()) }, 0,
            "accounts after deleting the entry first")
    }

    static func cascadeAndNullify(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        let (ownerID, passportID) = try await container.performUnitOfWork { context in
            let owner = KitOwner(context: context)
            for _ in 0..<3 { owner.pets.insert(KitPet(context: context)) }
            let passport = KitPassport(context: context)
            passport.number = "X1"
            owner.passport = passport
            try context.save()
            return (owner.objectID, passport.objectID)
        }
        try await container.performUnitOfWork { context in
            context.delete(try context.existingObject(with: ownerID))
            try context.save()
        }
        let result = try await container.read { context in
            let passport = try context.existingObject(with: passportID, as: KitPassport.self)
            return [
                try context.count(for: FetchRequest<KitPet>()), try context.count(for: FetchRequest<KitOwner>()),
                passport.holder == nil ? 0 : 1, passport.number == "X1" ? 0 : 1,
            ]
        }
        try kit.expectEqual(result, [0, 0, 0, 0], "pets, owners, passport holder set, passport changed")
    }
}
