import Foundation
import Strata
import Testing

@Suite("relationships and delete rules")
struct RelationshipTests {
    @Test("inverse relationships stay in sync in both directions", arguments: EngineKind.allCases)
    func inversesStayInSync(kind: EngineKind) async throws {
        let store = try TestStore(kind)
        let container = try store.open()
        let context = container.newBackgroundContext()
        let ids = try await context.perform {
            let checking = Account(context: context)
            checking.name = "Checking"
            let savings = Account(context: context)
            savings.name = "Savings"
            let entry = Entry(context: context)
            // Set from the to-one side: the to-many side follows.
            entry.account = checking
            #expect(checking.entries.contains(entry))
            #expect(checking.entries.count == 1)
            // Set from the to-many side: the to-one side follows and the old owner forgets it.
            savings.entries.insert(entry)
            #expect(entry.account === savings)
            #expect(!checking.entries.contains(entry))
            #expect(savings.entries.allObjects == [entry])
            savings.entries.remove(entry)
            #expect(entry.account == nil)
            #expect(savings.entries.isEmpty)
            checking.entries.insert(entry)
            try context.save()
            return (checking.objectID, savings.objectID, entry.objectID)
        }
        // A fresh context sees the saved graph, loading it lazily.
        let fresh = container.newBackgroundContext()
        let loaded = try await fresh.perform {
            let checking = try fresh.existingObject(with: ids.0, as: Account.self)
            let entry = try fresh.existingObject(with: ids.2, as: Entry.self)
            return (checking.entries.map(\.objectID), entry.account?.objectID, entry.$account)
        }
        #expect(loaded.0 == [ids.2])
        #expect(loaded.1 == ids.0)
        #expect(loaded.2 == ids.0)

        // Moving a saved entry in one context updates both sides before and after save.
        let mover = container.newBackgroundContext()
        let moved = try await mover.perform {
            let checking = try mover.existingObject(with: ids.0, as: Account.self)
            let savings = try mover.existingObject(with: ids.1, as: Account.self)
            let entry = try mover.existingObject(with: ids.2, as: Entry.self)
            _ = checking.entries.count
            entry.account = savings
            let inMemory = (checking.entries.count, savings.entries.count)
            try mover.save()
            return inMemory
        }
        #expect(moved == (0, 1))
        let check = container.newBackgroundContext()
        let counts = try await check.perform {
            (try check.existingObject(with: ids.0, as: Account.self).entries.count,
             try check.existingObject(with: ids.1, as: Account.self).entries.count)
        }
        #expect(counts == (0, 1))
    }

    @Test("many-to-many links are stored and both sides agree", arguments: EngineKind.allCases)
    func manyToMany(kind: EngineKind) async throws {
        let store = try TestStore(kind)
        let container = try store.open()
        let (accountID, tagIDs) = try await container.performUnitOfWork { context in
            let account = Account(context: context)
            account.name = "Tagged"
            let tags = (0..<3).map { index -> Tag in
                let tag = Tag(context: context)
                tag.label = "tag\(index)"
                return tag
            }
            account.tags.insert(tags[0])
            tags[1].accounts.insert(account)
            account.tags.insert(tags[2])
            account.tags.remove(tags[2])
            #expect(tags[2].accounts.isEmpty)
            try context.save()
            return (account.objectID, tags.map(\.objectID))
        }
        let context = container.newBackgroundContext()
        let (labels, backlinks) = try await context.perform {
            let account = try context.existingObject(with: accountID, as: Account.self)
            let labels = account.tags.map(\.label).sorted()
            let backlinks = try tagIDs.map { try context.existingObject(with: $0, as: Tag.self).accounts.count }
            return (labels, backlinks)
        }
        #expect(labels == ["tag0", "tag1"])
        #expect(backlinks == [1, 1, 0])
    }

    @Test("deny refuses the delete, cascade deletes targets, nullify clears the inverse", arguments: EngineKind.allCases)
    func deleteRules(kind: EngineKind) async throws {
        let store = try TestStore(kind)
        let container = try store.open()
        let ids = try await container.performUnitOfWork { context in
            let account = Account(context: context)
            account.name = "Denied"
            let entry = Entry(context: context)
            entry.account = account
            let owner = Owner(context: context)
            owner.name = "Ann"
            let pets = (0..<2).map { _ in Pet(context: context) }
            for pet in pets { owner.pets.insert(pet) }
            let passport = Passport(context: context)
            passport.number = "X1"
            owner.passport = passport
            #expect(passport.holder === owner)
            try context.save()
            return (account.objectID, entry.objectID, owner.objectID, pets.map(\.objectID), passport.objectID)
        }

        // Deny: the account has an entry.
        let denied = container.newBackgroundContext()
        let error = await #expect(throws: StrataError.self) {
            try await denied.perform {
                denied.delete(try denied.existingObject(with: ids.0))
                try denied.save()
            }
        }
        guard case .validation(let issues)? = error else {
            Issue.record("expected validation, got \(String(describing: error))")
            return
        }
        #expect(issues.map(\.property) == ["entries"])
        let probe = container.newBackgroundContext()
        let accounts = try await probe.perform { try probe.count(for: FetchRequest<Account>()) }
        #expect(accounts == 1)

        // Deleting the entry first lets the account go.
        try await container.performUnitOfWork { context in
            context.delete(try context.existingObject(with: ids.1))
            context.delete(try context.existingObject(with: ids.0))
            try context.save()
        }

        // Cascade deletes the pets; nullify keeps the passport without a holder.
        try await container.performUnitOfWork { context in
            context.delete(try context.existingObject(with: ids.2))
            try context.save()
        }
        let check = container.newBackgroundContext()
        let result = try await check.perform {
            let pets = try check.count(for: FetchRequest<Pet>())
            let owners = try check.count(for: FetchRequest<Owner>())
            let passport = try check.existingObject(with: ids.4, as: Passport.self)
            let entries = try check.count(for: FetchRequest<Entry>())
            let accounts = try check.count(for: FetchRequest<Account>())
            return (pets, owners, passport.holder == nil, passport.number, entries, accounts)
        }
        #expect(result.0 == 0)
        #expect(result.1 == 0)
        #expect(result.2)
        #expect(result.3 == "X1")
        #expect(result.4 == 0)
        #expect(result.5 == 0)
    }
}
