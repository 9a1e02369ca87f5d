import Foundation
import Strata

/// What a committed save's history transaction says: exactly its objects, kinds and changed
/// properties, its author, and relationship changes on both sides.
enum HistoryContentChecks {
    static let all: [ConformanceCheck] = [
        ConformanceCheck(
            HistoryChecks.group,
            "a committed save appends exactly one transaction naming exactly its objects, kinds and changed properties",
            oneTransaction),
        ConformanceCheck(
            HistoryChecks.group, "the author is the transactionAuthor, else the context's name, else nil", authors),
        ConformanceCheck(
            HistoryChecks.group, "relationship changes name the relationship on both sides", relationships),
    ]

    static let accountProperties = ["balance", "currency", "entries", "name", "note", "tags"]

    static func oneTransaction(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        let changed = try await container.makeAccount("Changed")
        let untouched = try await container.makeAccount("Untouched")
        let doomed = try await container.makeAccount("Doomed")
        let start = try await container.currentHistoryToken()
        let inserted = try await container.performUnitOfWork { context in
            let account = try context.existingObject(with: changed, as: KitAccount.self)
            account.balance = 10
            account.note = "changed"
            account.currency = "EUR" // the value it had: not a change
            _ = try context.existingObject(with: untouched, as: KitAccount.self).name
            context.delete(try context.existingObject(with: doomed, as: KitAccount.self))
            let fresh = KitAccount(context: context)
            fresh.name = "Fresh"
            try context.save()
            return fresh.objectID
        }
        let history = try await container.history(after: start)
        try kit.expectEqual(history.count, 1, "transactions appended by one save")
        try kit.expectEqual(
            history[0].summary,
            [
                "\(changed.label) update [\"balance\", \"note\"]", "\(doomed.label) delete []",
                "\(inserted.label) insert \(accountProperties)",
            ].sorted(), "the transaction's changes")
        try kit.expectEqual(history[0].changes.filter { $0.kind == .delete }.map(\.tombstone), [[:]], "the tombstone")
        try kit.expectEqual(
            history[0].token, try await container.currentHistoryToken(), "the current token after the save")
        try kit.expect(
            abs(history[0].timestamp.timeIntervalSinceNow) < 3600, "the timestamp \(history[0].timestamp) is now")

        let context = container.newBackgroundContext()
        try await context.perform {
            try context.existingObject(with: untouched, as: KitAccount.self).note = nil // already nil
            try context.save()
        }
        try kit.expectEqual(try await container.history(after: history[0].token), [], "history of a save of nothing")
    }

    static func authors(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        let start = try await container.currentHistoryToken()
        let named = container.newBackgroundContext(named: "named-context")
        let unnamed = container.newBackgroundContext()
        for (index, context) in [named, unnamed].enumerated() {
            try await context.perform {
                KitTag(context: context).label = "plain-\(index)"
                try context.save()
            }
        }
        named.transactionAuthor = "importer"
        unnamed.transactionAuthor = "sync"
        for (index, context) in [named, unnamed].enumerated() {
            try await context.perform {
                KitTag(context: context).label = "authored-\(index)"
                try context.save()
            }
        }
        named.transactionAuthor = nil
        try await named.perform {
            KitTag(context: named).label = "reset"
            try named.save()
        }
        let history = try await container.history(after: start)
        try kit.expectEqual(
            history.map(\.author), ["named-context", nil, "importer", "sync", "named-context"], "the authors")
        let filtered = try await container.history(after: start, authors: ["importer", "sync"])
        try kit.expectEqual(filtered.map(\.token), [history[2].token, history[3].token], "history by author")
    }

    static func relationships(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        let (account, entry, tag, owner, passport) = try await container.performUnitOfWork { context in
            let account = KitAccount(context: context)
            account.name = "A"
            let entry = KitEntry(context: context)
            let tag = KitTag(context: context)
            let owner = KitOwner(context: context)
            let passport = KitPassport(context: context)
            try context.save()
            return (account.objectID, entry.objectID, tag.objectID, owner.objectID, passport.objectID)
        }
        let steps: [(String, @Sendable (ObjectContext) throws -> Void, [String])] = [
            (
                "setting a to-one with a to-many inverse",
                { try $0.existingObject(with: entry, as: KitEntry.self).account = try $0.object(account) },
                ["\(account.label) update [\"entries\"]", "\(entry.label) update [\"account\"]"]
            ),
            (
                "removing from a to-many with a to-one inverse",
                { context in
                    let account: KitAccount = try context.object(account)
                    _ = account.entries.remove(try context.existingObject(with: entry, as: KitEntry.self))
                },
                ["\(account.label) update [\"entries\"]", "\(entry.label) update [\"account\"]"]
            ),
            (
                "inserting into a many-to-many",
                { _ = try ($0.object(account) as KitAccount).tags.insert(try $0.object(tag)) },
                ["\(account.label) update [\"tags\"]", "\(tag.label) update [\"accounts\"]"]
            ),
            (
                "removing from a many-to-many on the other side",
                { _ = try ($0.object(tag) as KitTag).accounts.remove(try $0.object(account)) },
                ["\(account.label) update [\"tags\"]", "\(tag.label) update [\"accounts\"]"]
            ),
            (
                "setting a one-to-one",
                { try ($0.object(owner) as KitOwner).passport = try $0.object(passport) },
                ["\(owner.label) update [\"passport\"]", "\(passport.label) update [\"holder\"]"]
            ),
            (
                "clearing a one-to-one from the other side",
                { try ($0.object(passport) as KitPassport).holder = nil },
                ["\(owner.label) update [\"passport\"]", "\(passport.label) update [\"holder\"]"]
            ),
        ]
        for (what, change, expected) in steps {
            let start = try await container.currentHistoryToken()
            try await container.performUnitOfWork { context in
                try change(context)
                try context.save()
            }
            let history = try await container.history(after: start)
            try kit.expectEqual(history.map(\.summary), [expected.sorted()], "the history of \(what)")
        }
    }
}

extension ObjectContext {
    /// The object with `id`, typed by the caller.
    fileprivate func object<T: ManagedObject>(_ id: ObjectID) throws -> T {
        try existingObject(with: id, as: T.self)
    }
}
