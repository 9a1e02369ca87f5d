import Foundation
import Strata
import StrataStorage

/// Raw-value enums and Codable values: stored, reloaded and queried the same on every engine,
/// and a stored value the model cannot decode is a typed error, not a crash or a wrong value.
enum AttributeTypeChecks {
    static let all: [ConformanceCheck] = [
        ConformanceCheck(
            "Attribute types", "enums and Codable values round-trip, optional or not, with their defaults", roundTrip),
        ConformanceCheck(
            "Attribute types", "predicates and sorts on enums and Codable values give the type's own answers",
            predicates),
        ConformanceCheck(
            "Attribute types", "a stored value the model cannot decode makes fetch and lookup throw undecodableValue",
            undecodable),
        ConformanceCheck(
            "Attribute types", "a Codable value that cannot be encoded makes save throw validation", unencodable),
    ]

    struct Values: Equatable, Sendable {
        var title: String
        var status: KitStatus
        var previous: KitStatus?
        var priority: KitPriority
        var address: KitAddress
        var mailing: KitAddress?
        var labels: [String]
        var history: [KitStatus]?

        init(_ ticket: KitTicket) {
            title = ticket.title
            status = ticket.status
            previous = ticket.previous
            priority = ticket.priority
            address = ticket.address
            mailing = ticket.mailing
            labels = ticket.labels
            history = ticket.history
        }

        init(
            title: String, status: KitStatus, previous: KitStatus?, priority: KitPriority, address: KitAddress,
            mailing: KitAddress?, labels: [String], history: [KitStatus]?
        ) {
            (self.title, self.status, self.previous, self.priority) = (title, status, previous, priority)
            (self.address, self.mailing, self.labels, self.history) = (address, mailing, labels, history)
        }

        func write(to ticket: KitTicket) {
            ticket.title = title
            ticket.status = status
            ticket.previous = previous
            ticket.priority = priority
            ticket.address = address
            ticket.mailing = mailing
            ticket.labels = labels
            ticket.history = history
        }
    }

    static let defaults = Values(
        title: "", status: .draft, previous: nil, priority: .normal,
        address: KitAddress(street: "1 Main Street", city: "Oslo"),
        mailing: nil, labels: ["new"], history: nil)

    static let filled = Values(
        title: "filled", status: .archived, previous: .active, priority: .high,
        address: KitAddress(street: "Storgata 5 \"B\"", city: "Tromsø", latitude: 69.65),
        mailing: KitAddress(street: "Box 12", city: "Bergen", latitude: -0.5), labels: ["a", "ü", ""],
        history: [.draft, .active])

    static func roundTrip(_ kit: ConformanceHarness) async throws {
        var container = try kit.open(schema: AttributeTypeModels.schema)
        let context = container.newBackgroundContext()
        let ids = try await context.perform {
            let untouched = KitTicket(context: context)
            let ticket = KitTicket(context: context)
            filled.write(to: ticket)
            try context.save()
            return [untouched.objectID, ticket.objectID]
        }
        container = try kit.open(schema: AttributeTypeModels.schema)
        let reader = container.newBackgroundContext()
        let loaded = try await reader.perform {
            try ids.map { Values(try reader.existingObject(with: $0, as: KitTicket.self)) }
        }
        try kit.expectEqual(loaded, [defaults, filled], "values after a save and a reopen")
        // Back to nil and to the defaults, saved and reloaded.
        try await reader.perform {
            let ticket = try reader.existingObject(with: ids[1], as: KitTicket.self)
            defaults.write(to: ticket)
            try reader.save()
        }
        let again = container.newBackgroundContext()
        let reset = try await again.perform { Values(try again.existingObject(with: ids[1], as: KitTicket.self)) }
        try kit.expectEqual(reset, defaults, "values set back to nil and the defaults")
    }

    /// Titles of tickets seeded for the predicate check, with their values.
    static func seedTickets(_ container: PersistentContainer) async throws {
        let context = container.newBackgroundContext()
        try await context.perform {
            let rows: [(String, KitStatus, KitStatus?, KitPriority, KitAddress?, [String])] = [
                ("a", .draft, nil, .low, nil, ["x"]),
                ("b", .active, .draft, .normal, KitAddress(street: "Box 1", city: "Oslo"), []),
                ("c", .archived, .active, .high, nil, ["x", "y"]),
                ("d", .active, nil, .high, KitAddress(street: "Box 2", city: "Bergen"), ["y"]),
            ]
            for (title, status, previous, priority, mailing, labels) in rows {
                let ticket = KitTicket(context: context)
                ticket.title = title
                ticket.status = status
                ticket.previous = previous
                ticket.priority = priority
                ticket.mailing = mailing
                ticket.labels = labels
            }
            try context.save()
        }
    }

    static func predicates(_ kit: ConformanceHarness) async throws {
        let container = try kit.open(schema: AttributeTypeModels.schema)
        try await seedTickets(container)
        // `#Predicate` takes no enum case literal (`.active` and `KitStatus.active` do not compile
        // inside it): enum values are captured.
        let active = KitStatus.active
        let draft = KitStatus.draft
        let archived = KitStatus.archived
        let low = KitPriority.low
        let openStatuses = [KitStatus.draft, .archived]
        let oslo = KitAddress(street: "Box 1", city: "Oslo")
        let cases: [(String, Predicate<KitTicket>, [String])] = [
            ("status == captured .active", #Predicate { $0.status == active }, ["b", "d"]),
            ("status == captured", #Predicate { $0.status == archived }, ["c"]),
            ("status != captured .draft", #Predicate { $0.status != draft }, ["b", "c", "d"]),
            ("optional == captured .active", #Predicate { $0.previous == active }, ["c"]),
            ("optional == nil", #Predicate { $0.previous == nil }, ["a", "d"]),
            ("membership", #Predicate { openStatuses.contains($0.status) }, ["a", "c"]),
            ("rawValue < \"b\"", #Predicate { $0.status.rawValue < "b" }, ["b", "c", "d"]),
            ("rawValue starts with", #Predicate { $0.status.rawValue.starts(with: "ar") }, ["c"]),
            ("priority > captured .low (own order)", #Predicate { $0.priority > low }, ["b", "c", "d"]),
            ("priority.rawValue > 15 (raw order)", #Predicate { $0.priority.rawValue > 15 }, ["a", "c", "d"]),
            ("codable == nil", #Predicate { $0.mailing == nil }, ["a", "c"]),
            ("codable != nil", #Predicate { $0.mailing != nil }, ["b", "d"]),
            ("codable == captured", #Predicate { $0.mailing == oslo }, ["b"]),
            ("codable field", #Predicate { $0.mailing?.city == "Bergen" }, ["d"]),
            ("array contains", #Predicate { $0.labels.contains("x") }, ["a", "c"]),
            ("enum and codable", #Predicate { $0.status == active && $0.mailing?.city == "Oslo" }, ["b"]),
        ]
        let context = container.newBackgroundContext()
        let failures = try await context.perform {
            var failures: [String] = []
            for (name, predicate, expected) in cases {
                let request = FetchRequest<KitTicket>(predicate: predicate, sortBy: [SortDescriptor(\.title)])
                let titles = try context.fetch(request).map(\.title)
                if titles != expected { failures.append("\(name): \(titles), expected \(expected)") }
                let count = try context.count(for: request)
                if count != expected.count { failures.append("\(name): count \(count), expected \(expected.count)") }
            }
            // The type's own order in sorts: low, normal, high, then title.
            let sorted = try context.fetch(
                FetchRequest<KitTicket>(sortBy: [SortDescriptor(\.priority), SortDescriptor(\.title)]))
            if sorted.map(\.title) != ["a", "b", "c", "d"] {
                failures.append("sort by priority: \(sorted.map(\.title))")
            }
            let reversed = try context.fetch(
                FetchRequest<KitTicket>(
                    sortBy: [SortDescriptor(\.priority, order: .reverse), SortDescriptor(\.title)], fetchLimit: 2))
            if reversed.map(\.title) != ["c", "d"] {
                failures.append("sort by priority, reversed, limit 2: \(reversed.map(\.title))")
            }
            // The same predicates with an unsaved change, which are judged in memory.
            let b = try kit.first(
                context.fetch(FetchRequest<KitTicket>(predicate: #Predicate { $0.title == "b" })), "tickets titled b")
            b.status = .archived
            b.mailing = nil
            let changed = try context.fetch(
                FetchRequest<KitTicket>(predicate: #Predicate { $0.status == archived && $0.mailing == nil }))
            if changed.map(\.title).sorted() != ["b", "c"] {
                failures.append("with an unsaved change: \(changed.map(\.title))")
            }
            return failures
        }
        try kit.expect(failures.isEmpty, "predicates: \(failures)")
    }

    /// Overwrites one column of a saved ticket behind the core's back, through the engine.
    static func overwrite(_ kit: ConformanceHarness, key: Int64, column name: String, with value: StoredValue) throws {
        let storeSchema = AttributeTypeModels.schema.storeSchema
        guard let entity = storeSchema.entities.first(where: { $0.name == "Ticket" }),
            let column = entity.columns.firstIndex(where: { $0.name == name })
        else { throw kit.fail("the attribute-type schema has no Ticket.\(name)") }
        let engine = try kit.configuration.open(storeSchema)
        defer { engine.close() }
        let reader = try engine.makeReader()
        defer { reader.close() }
        guard var row = try reader.row(entity: entity.number, key: key) else {
            throw kit.fail("ticket \(key) is not stored")
        }
        row.values[column] = value
        var changes = ChangeSet()
        changes.updates = [RowWrite(entity: entity.number, key: key, expectedVersion: row.version, values: row.values)]
        try engine.commit(changes)
    }

    /// Values of the column's storage class that do not decode (engines refuse a value of
    /// another storage class at commit).
    static func undecodable(_ kit: ConformanceHarness) async throws {
        let container = try kit.open(schema: AttributeTypeModels.schema)
        try await seedTickets(container)
        let bad: [(column: String, value: StoredValue)] = [
            ("status", .text("closed")),
            ("previous", .text("")),
            ("priority", .integer(40)),
            ("address", .blob(Data("{\"street\":1}".utf8))),
            ("mailing", .blob(Data("not json".utf8))),
            ("labels", .blob(Data("{}".utf8))),
            ("history", .blob(Data("[\"draft\",\"closed\"]".utf8))),
        ]
        for (column, value) in bad {
            let finder = container.newBackgroundContext()
            let id = try await finder.perform {
                try kit.first(
                    finder.fetch(FetchRequest<KitTicket>(predicate: #Predicate { $0.title == "c" })), "tickets titled c"
                ).objectID
            }
            guard let key = id.primaryKey else { throw kit.fail("a saved ticket has no key") }
            let good = try await readRow(container, id)
            try overwrite(kit, key: key, column: column, with: value)
            let context = container.newBackgroundContext()
            let errors = try await context.perform {
                try ConformanceHarness.strataErrors(of: [
                    { _ = try context.fetch(FetchRequest<KitTicket>()) },
                    { _ = try context.existingObject(with: id, as: KitTicket.self) },
                    { _ = try context.fetch(FetchRequest<KitTicket>(predicate: #Predicate { $0.title == "c" })) },
                ])
            }
            for error in errors {
                guard case .undecodableValue(let entity, let attribute, let errorKey, _)? = error else {
                    throw kit.fail("\(column) = \(value): expected undecodableValue, got \(String(describing: error))")
                }
                try kit.expectEqual(
                    [entity, attribute, String(errorKey)], ["Ticket", column, String(key)], "what the error names")
            }
            // The row is not damaged: written back correctly, it loads again.
            try overwrite(kit, key: key, column: column, with: good[column] ?? .null)
            try kit.expectEqual(try await readRow(container, id), good, "the row after the good value is written back")
        }
    }

    /// A ticket's stored values, by column name, as a fresh context reads them.
    static func readRow(_ container: PersistentContainer, _ id: ObjectID) async throws -> [String: StoredValue] {
        let context = container.newBackgroundContext()
        let values = try await context.perform { Values(try context.existingObject(with: id, as: KitTicket.self)) }
        return [
            "status": values.status.storedValue, "previous": values.previous.storedValue,
            "priority": values.priority.storedValue,
            "address": values.address.storedValue, "mailing": values.mailing.storedValue,
            "labels": values.labels.storedValue,
            "history": values.history.storedValue,
        ]
    }

    static func unencodable(_ kit: ConformanceHarness) async throws {
        let container = try kit.open(schema: AttributeTypeModels.schema)
        let context = container.newBackgroundContext()
        let error = try await kit.expectStrataError("a save with an infinite latitude") {
            try await context.perform {
                let ticket = KitTicket(context: context)
                ticket.mailing = KitAddress(street: "Pole", city: "Nowhere", latitude: .infinity)
                try context.save()
            }
        }
        guard case .validation(let issues) = error, issues.map(\.property) == ["mailing"] else {
            throw kit.fail("expected a validation issue on mailing, got \(error)")
        }
        let counter = container.newBackgroundContext()
        let count = try await counter.perform { try counter.count(for: FetchRequest<KitTicket>()) }
        try kit.expectEqual(count, 0, "tickets stored after the refused save")
    }
}
