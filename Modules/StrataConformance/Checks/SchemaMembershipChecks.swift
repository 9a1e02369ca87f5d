import Foundation
import Strata

/// A class the container's schema does not list: fetching, counting, looking it up or
/// inserting it gives a typed error naming the class and the schema, never a stop.
enum SchemaMembershipChecks {
    static let all: [ConformanceCheck] = [
        ConformanceCheck(
            "Contexts", "fetch, count and lookup of a class outside the schema throw a typed error naming it", reads),
        ConformanceCheck(
            "Contexts", "inserting a class outside the schema makes the next save throw and write nothing", inserts),
    ]

    /// Expects `.misuse` whose message names the stranger class and the schema's entities.
    static func expectNotInSchema(_ kit: ConformanceHarness, _ error: StrataError?, _ what: String) throws {
        guard case .misuse(let message, _)? = error else {
            throw kit.fail("\(what): expected .misuse, got \(error.map { "\($0)" } ?? "no error")")
        }
        for name in ["Stranger", "Account", "Entry", "Seat"] {
            try kit.expect(message.contains(name), "\(what): the message names \(name): \(message)")
        }
    }

    static func reads(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        let accountID = try await container.makeAccount("A", balance: 1)
        let errors = try await container.read { context in
            try ConformanceHarness.strataErrors(of: [
                { _ = try context.fetch(FetchRequest<KitStranger>()) },
                { _ = try context.count(for: FetchRequest<KitStranger>()) },
                {
                    _ = try context.fetch(
                        FetchRequest<KitStranger>(predicate: #Predicate { $0.label == "x" }, fetchLimit: 1))
                },
                { _ = try context.existingObject(with: accountID, as: KitStranger.self) },
            ])
        }
        try expectNotInSchema(kit, errors[0], "fetch")
        try expectNotInSchema(kit, errors[1], "count")
        try expectNotInSchema(kit, errors[2], "fetch with a predicate and a limit")
        try kit.expectEqual(
            errors[3], .wrongEntity(accountID, expected: KitStranger.entityName),
            "an Account's ID looked up as a Stranger")
    }

    static func inserts(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        _ = try await container.makeAccount("Existing", balance: 1)
        let context = container.newBackgroundContext()
        let (error, hadChanges, stranger) = try await context.perform {
            let account = KitAccount(context: context)
            account.name = "New"
            let stranger = KitStranger(context: context)
            stranger.label = "lost"
            let hadChanges = context.hasChanges
            do {
                try context.save()
                return (StrataError?.none, hadChanges, stranger.label)
            } catch let error as StrataError {
                return (error, hadChanges, stranger.label)
            }
        }
        try expectNotInSchema(kit, error, "save after inserting a Stranger")
        try kit.expect(hadChanges, "hasChanges is true after the refused insert")
        try kit.expectEqual(stranger, "lost", "the refused object stays a plain value")
        let names = try await container.read { context in
            try context.fetch(FetchRequest<KitAccount>(sortBy: [SortDescriptor(\.name)])).map(\.name)
        }
        try kit.expectEqual(names, ["Existing"], "accounts after the refused save: nothing was written")
        let again = try await context.perform { () -> StrataError? in
            do {
                try context.save()
                return nil
            } catch let error as StrataError {
                return error
            }
        }
        try expectNotInSchema(kit, again, "a second save before rollback")
        let saved = try await context.perform {
            context.rollback()
            KitAccount(context: context).name = "After rollback"
            try context.save()
            return try context.count(for: FetchRequest<KitAccount>())
        }
        try kit.expectEqual(saved, 2, "accounts after rollback and a valid save")
    }
}

/// A model class that no schema of the kit lists.
final class KitStranger: ManagedObject {
    override class var entityName: String { "Stranger" }
    @Attribute var label = ""
}
