import Foundation
import Strata

/// A to-one relationship compared with nil (`$0.account == nil`, `$0.$account != nil`) runs in
/// the engine, in fetches, counts and batches alike; and a link to an object the context has
/// not saved yet is a link, although its column holds no key until the save.
enum NilLinkChecks {
    static let all: [ConformanceCheck] = [
        ConformanceCheck(
            "Fetch semantics",
            "a to-one compared with nil runs in fetches, counts and batches; a link to an unsaved object is a link",
            nilLinks)
    ]

    /// Entries 0 and 1 linked to account A, entries 2 and 3 to none.
    static func seed(_ container: PersistentContainer) async throws {
        try await container.performUnitOfWork { context in
            let account = KitAccount(context: context)
            account.name = "A"
            for index in 0..<4 {
                let entry = KitEntry(context: context)
                entry.amount = Int64(index)
                if index < 2 { entry.account = account }
            }
            try context.save()
        }
    }

    /// The amounts of the entries `predicate` selects in `context`, sorted, with their count.
    static func amounts(_ context: ObjectContext, _ predicate: Predicate<KitEntry>) throws -> String {
        let request = FetchRequest<KitEntry>(predicate: predicate, sortBy: [SortDescriptor(\.amount)])
        return "\(try context.fetch(request).map(\.amount)) count \(try context.count(for: request))"
    }

    static func nilLinks(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        try await seed(container)
        let stored = try await container.read { context in
            [
                try amounts(context, #Predicate { $0.account == nil }),
                try amounts(context, #Predicate { $0.account != nil }),
                try amounts(context, #Predicate { $0.$account == nil }),
            ]
        }
        try kit.expectEqual(stored, ["[2, 3] count 2", "[0, 1] count 2", "[2, 3] count 2"], "saved links")

        // Unsaved: entry 2 linked to a new account, entry 1 unlinked, two new entries.
        let unsaved = try await container.read { context in
            let entries = try context.fetch(FetchRequest<KitEntry>(sortBy: [SortDescriptor(\.amount)]))
            let fresh = KitAccount(context: context)
            fresh.name = "unsaved"
            entries[2].account = fresh
            entries[1].account = nil
            let linked = KitEntry(context: context)
            linked.amount = 10
            linked.account = fresh
            KitEntry(context: context).amount = 11
            return [
                try amounts(context, #Predicate { $0.account == nil }),
                try amounts(context, #Predicate { $0.account != nil }),
                try amounts(context, #Predicate { $0.$account == nil }),
                try amounts(context, #Predicate { $0.$account != nil }),
            ]
        }
        try kit.expectEqual(
            unsaved,
            ["[1, 3, 11] count 3", "[0, 2, 10] count 3", "[1, 3, 11] count 3", "[0, 2, 10] count 3"],
            "links to unsaved objects read as links, unlinked objects as nil")

        // Linked while the target's ID was temporary, then given its permanent ID: the link's
        // column is brought up to date only by the save, but every predicate sees the link.
        let obtained = try await container.read { context in
            let fresh = KitAccount(context: context)
            fresh.name = "obtained"
            let entry = KitEntry(context: context)
            entry.amount = 12
            entry.account = fresh
            try context.obtainPermanentIDs(for: [fresh])
            let id: ObjectID? = fresh.objectID
            let ids = [id]
            return [
                try amounts(context, #Predicate { $0.$account == id }),
                try amounts(context, #Predicate { ids.contains($0.$account) }),
                try amounts(context, #Predicate { $0.account == nil }),
            ]
        }
        try kit.expectEqual(
            obtained, ["[12] count 1", "[12] count 1", "[2, 3] count 2"],
            "a link made before obtainPermanentIDs names the permanent ID")

        // Batches take the same predicate to the engine.
        let written = try await container.performUnitOfWork { context in
            try context.batchUpdate(KitEntry.self, where: #Predicate { $0.account != nil }, set: [.add(\.amount, 100)])
            try context.batchDelete(KitEntry.self, where: #Predicate { $0.account == nil })
            try context.save()
            return context.savedBatches.map { "\($0.kind) \($0.updatedCount + $0.deletedCount)" }
        }
        try kit.expectEqual(written, ["update 2", "delete 2"], "the batches' rows")
        let left = try await container.read { context in try amounts(context, #Predicate { $0.amount >= 0 }) }
        try kit.expectEqual(left, "[100, 101] count 2", "the entries after the batches")
    }
}
