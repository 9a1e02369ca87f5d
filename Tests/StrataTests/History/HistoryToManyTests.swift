import Foundation
import Strata
import Testing

/// A saved object whose to-many relationships change records every one of them in its history
/// update, however often each is touched: the context notes a to-many change only on an object's
/// first touch when its entity has a single to-many relationship, and on every touch otherwise.
@Suite("history of to-many changes")
struct HistoryToManyTests {
    @Test(
        "an update lists each changed to-many relationship once, after many touches of one or several",
        arguments: EngineKind.allCases)
    func touchedRelationshipsAreListed(kind: EngineKind) async throws {
        let store = try TestStore(kind)
        let container = try store.open()
        let context = container.newBackgroundContext()
        let (accountID, otherID, tagID) = try await context.perform {
            let account = Account(context: context)
            account.name = "a"
            let other = Account(context: context)
            other.name = "b"
            let tag = Tag(context: context)
            tag.label = "t"
            try context.save()
            return (account.objectID, other.objectID, tag.objectID)
        }
        let before = try await container.currentHistoryToken()
        try await context.perform {
            let account = try context.existingObject(with: accountID, as: Account.self)
            let other = try context.existingObject(with: otherID, as: Account.self)
            let tag = try context.existingObject(with: tagID, as: Tag.self)
            // Account has two to-many relationships: `entries` touched three times, then `tags`.
            for amount in 1...3 {
                let entry = Entry(context: context)
                entry.amount = Int64(amount)
                entry.account = account
            }
            _ = account.tags.insert(tag)
            // Tag has one, `accounts`: touched by the line above, then again.
            _ = tag.accounts.insert(other)
            try context.save()
        }
        let history = try await container.history(after: before)
        try #require(history.count == 1)
        let updates = Dictionary(
            uniqueKeysWithValues: history[0].changes.filter { $0.kind == .update }.map {
                ($0.objectID, $0.changedProperties)
            })
        #expect(updates[accountID] == ["entries", "tags"])
        #expect(updates[tagID] == ["accounts"])
        #expect(updates[otherID] == ["tags"])
    }
}
