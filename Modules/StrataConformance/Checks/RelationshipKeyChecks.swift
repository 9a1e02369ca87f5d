import Foundation
import Strata

/// A relationship-key predicate (`$0.$account == id`, `ids.contains($0.$account)`) compares
/// primary keys only, so an ID that cannot name a row of the relationship's target is refused
/// the way `existingObject(with:)` refuses it — never answered with unrelated rows.
enum RelationshipKeyChecks {
    static let all: [ConformanceCheck] = [
        ConformanceCheck(
            "IDs and URIs",
            "relationship-key predicates refuse IDs of another store, another entity or an unsaved object", refusals)
    ]

    /// Account A (key k) with entries 0, 2, 4 and account B with 1, 3, 5; an owner whose key is
    /// also k. Returns A's and the owner's IDs.
    static func seed(_ container: PersistentContainer) async throws -> (account: ObjectID, owner: ObjectID) {
        try await container.performUnitOfWork { context in
            let a = KitAccount(context: context)
            a.name = "A"
            let b = KitAccount(context: context)
            b.name = "B"
            for index in 0..<6 {
                let entry = KitEntry(context: context)
                entry.amount = Int64(index)
                entry.account = index.isMultiple(of: 2) ? a : b
            }
            let owner = KitOwner(context: context)
            owner.name = "O"
            try context.save()
            return (a.objectID, owner.objectID)
        }
    }

    /// The error (or the amounts) of a fetch and a count of entries with `predicate`, with or
    /// without an unsaved entry in the context (so the in-memory path runs too).
    static func attempt(
        _ container: PersistentContainer, unsaved: Bool,
        _ predicate: @escaping @Sendable (ObjectID?) -> Predicate<KitEntry>,
        id: @escaping @Sendable (ObjectContext) -> ObjectID?
    ) async throws -> [String] {
        try await container.read { context in
            if unsaved { KitEntry(context: context).amount = 99 }
            let request = FetchRequest<KitEntry>(predicate: predicate(id(context)), sortBy: [SortDescriptor(\.amount)])
            var outcomes: [String] = []
            do {
                outcomes.append("\(try context.fetch(request).map(\.amount))")
            } catch let error as StrataError {
                outcomes.append("\(error)")
            }
            do {
                outcomes.append("count \(try context.count(for: request))")
            } catch let error as StrataError {
                outcomes.append("\(error)")
            }
            return outcomes
        }
    }

    static func refusals(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        let (accountID, ownerID) = try await seed(container)
        let other = try PersistentContainer(schema: KitModels.schema, engine: try kit.otherConfiguration("other"))
        let (foreignID, _) = try await seed(other)
        try kit.expectEqual(foreignID.primaryKey, accountID.primaryKey, "the other store's account A has the same key")
        try kit.expectEqual(ownerID.primaryKey, accountID.primaryKey, "the owner has the account's key")

        let equal: @Sendable (ObjectID?) -> Predicate<KitEntry> = { id in #Predicate { $0.$account == id } }
        let member: @Sendable (ObjectID?) -> Predicate<KitEntry> = { id in
            let ids: [ObjectID?] = [id]
            return #Predicate { ids.contains($0.$account) }
        }
        let mixed: @Sendable (ObjectID?) -> Predicate<KitEntry> = { id in
            #Predicate { $0.amount >= 0 && $0.$account == id }
        }
        let predicates = [("==", equal), ("contains", member), ("&& ==", mixed)]

        for unsaved in [false, true] {
            for (label, predicate) in predicates {
                let place = "\(label)\(unsaved ? " with an unsaved entry" : "")"
                let good = try await attempt(container, unsaved: unsaved, predicate) { _ in accountID }
                try kit.expectEqual(good, ["[0, 2, 4]", "count 3"], "\(place): account A's own ID selects its entries")

                let foreign = try await attempt(container, unsaved: unsaved, predicate) { _ in foreignID }
                let otherStore = "\(StrataError.invalidURI(foreignID.uriString, reason: .otherStore))"
                try kit.expectEqual(foreign, [otherStore, otherStore], "\(place): an ID of another store")

                let wrongEntity = try await attempt(container, unsaved: unsaved, predicate) { _ in ownerID }
                let unknown = "\(StrataError.invalidURI(ownerID.uriString, reason: .unknownEntity))"
                try kit.expectEqual(
                    wrongEntity, [unknown, unknown], "\(place): an Owner's ID for the account relationship")

                let temporary = try await container.read { context -> [String] in
                    let fresh = KitAccount(context: context)
                    fresh.name = "unsaved"
                    let id = fresh.objectID
                    var outcomes: [String] = []
                    for call in [
                        { _ = try context.fetch(FetchRequest<KitEntry>(predicate: predicate(id))) },
                        { _ = try context.count(for: FetchRequest<KitEntry>(predicate: predicate(id))) },
                    ] {
                        do {
                            try call()
                            outcomes.append("no error")
                        } catch StrataError.invalidURI(let uri, let reason) {
                            outcomes.append(uri == id.uriString ? "\(reason)" : "another URI \(uri)")
                        }
                    }
                    return outcomes
                }
                try kit.expectEqual(
                    temporary, ["temporary", "temporary"], "\(place): an unsaved account's temporary ID")
            }
        }
    }
}
