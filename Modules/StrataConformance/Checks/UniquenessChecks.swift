import Foundation
import Strata

/// Unique attributes and compound constraints hold against the store and inside one save;
/// nil never conflicts; indexed attributes filter and sort like the rest.
enum UniquenessChecks {
    static let all: [ConformanceCheck] = [
        ConformanceCheck(
            "Uniqueness and indexes", "a unique attribute refuses a stored duplicate and writes nothing",
            storedDuplicate),
        ConformanceCheck(
            "Uniqueness and indexes", "a compound constraint holds inside one save and against the store", compound),
        ConformanceCheck(
            "Uniqueness and indexes",
            "a clash names the first clashing unique index from the schema and keeps the native cause",
            namedFromSchema),
        ConformanceCheck(
            "Uniqueness and indexes", "nil values never conflict; a freed value can be reused", nilsAndReuse),
        ConformanceCheck(
            "Uniqueness and indexes",
            "unsaved objects that share a unique value are refused before the engine is asked, nils aside",
            amongUnsaved),
        ConformanceCheck(
            "Uniqueness and indexes", "indexed attributes filter and sort like unindexed ones", indexedQueries),
    ]

    static func storedDuplicate(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        _ = try await container.makeAccount("Only")
        let context = container.newBackgroundContext()
        let error = try await kit.expectStrataError("inserting a second account named Only") {
            try await context.perform {
                KitAccount(context: context).name = "Fine"
                KitAccount(context: context).name = "Only"
                try context.save()
            }
        }
        try kit.expectEqual(
            error.withoutNative, .constraintViolation(entity: "Account", attributes: ["name"]), "the error")
        try kit.expect(error.native != nil, "a clash the engine found keeps the engine's native error (got \(error))")
        let names = try await container.read { try $0.fetch(FetchRequest<KitAccount>()).map(\.name) }
        try kit.expectEqual(names, ["Only"], "accounts stored")
    }

    static func compound(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        try await container.performUnitOfWork { context in
            for number in 1...3 {
                let seat = KitSeat(context: context)
                seat.row = "A"
                seat.number = number
            }
            let other = KitSeat(context: context)
            other.row = "B"
            other.number = 1
            try context.save()
        }
        for clashRow in ["C", "A"] {
            let context = container.newBackgroundContext()
            let error = try await kit.expectStrataError("a duplicate (row, number) with row \(clashRow)") {
                try await context.perform {
                    let seat = KitSeat(context: context)
                    seat.row = "C"
                    seat.number = 1
                    let clash = KitSeat(context: context)
                    clash.row = clashRow
                    clash.number = 1
                    try context.save()
                }
            }
            try kit.expectEqual(
                error.withoutNative, .constraintViolation(entity: "Seat", attributes: ["row", "number"]), "the error")
        }
        try kit.expectEqual(try await container.read { try $0.count(for: FetchRequest<KitSeat>()) }, 4, "seats stored")
    }

    /// Seat has two unique indexes, `code` first and `(row, number)` second in the schema. Each
    /// clash against the store names its own index (never one parsed from an engine's message),
    /// a row clashing with both names the first, and each carries the engine's native error.
    static func namedFromSchema(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        try await container.performUnitOfWork { context in
            let seat = KitSeat(context: context)
            seat.row = "A"
            seat.number = 1
            seat.code = "A1"
            try context.save()
        }
        let clashes: [(row: String, code: String, attributes: [String])] = [
            ("A", "other", ["row", "number"]), // only the second unique index clashes
            ("B", "A1", ["code"]), // only the first
            ("A", "A1", ["code"]), // both: the first in schema order
        ]
        for clash in clashes {
            let context = container.newBackgroundContext()
            let error = try await kit.expectStrataError("a seat (\(clash.row), 1) with code \(clash.code)") {
                try await context.perform {
                    let seat = KitSeat(context: context)
                    seat.row = clash.row
                    seat.number = 1
                    seat.code = clash.code
                    try context.save()
                }
            }
            try kit.expectEqual(
                error.withoutNative, .constraintViolation(entity: "Seat", attributes: clash.attributes),
                "the error for (\(clash.row), 1, \(clash.code))")
            guard let native = error.native else {
                throw kit.fail("no native error under \(error): an engine keeps its own error")
            }
            try kit.expect(
                error.description.contains("\(native.code)") && error.description.contains(native.message),
                "the description names the native cause: \(error)")
        }
        try kit.expectEqual(try await container.read { try $0.count(for: FetchRequest<KitSeat>()) }, 1, "seats stored")
    }

    static func nilsAndReuse(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        let firstID = try await container.performUnitOfWork { context in
            for number in 1...3 {
                let seat = KitSeat(context: context)
                seat.number = number
            }
            let coded = KitSeat(context: context)
            coded.number = 9
            coded.code = "X"
            try context.save()
            return coded.objectID
        }
        try await container.performUnitOfWork { context in
            context.delete(try context.existingObject(with: firstID))
            let reused = KitSeat(context: context)
            reused.number = 10
            reused.code = "X"
            try context.save()
        }
        let codes = try await container.read { context in
            try context.fetch(FetchRequest<KitSeat>(sortBy: [SortDescriptor(\.number)])).map { $0.code ?? "nil" }
        }
        try kit.expectEqual(codes, ["nil", "nil", "nil", "X"], "codes after reusing X")
    }

    /// Duplicates among one save's own inserts are caught before anything is written, for a
    /// one-column unique index (a name; a code beside many nil codes) and for a compound one,
    /// without an engine error; many unsaved objects with nil codes save.
    static func amongUnsaved(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        let cases: [(what: String, entity: String, attributes: [String], insert: @Sendable (ObjectContext) -> Void)] = [
            (
                "two unsaved accounts named Twin", "Account", ["name"],
                { context in
                    for name in ["Twin", "Other", "Twin"] { KitAccount(context: context).name = name }
                }
            ),
            (
                "two unsaved seats coded Q among nil codes", "Seat", ["code"],
                { context in
                    for number in 1...40 {
                        let seat = KitSeat(context: context)
                        seat.number = number
                        seat.code = number == 7 || number == 31 ? "Q" : nil
                    }
                }
            ),
            (
                "two unsaved seats at (D, 2)", "Seat", ["row", "number"],
                { context in
                    for row in ["D", "E", "D"] {
                        let seat = KitSeat(context: context)
                        seat.row = row
                        seat.number = 2
                    }
                }
            ),
        ]
        for clash in cases {
            let context = container.newBackgroundContext()
            let error = try await kit.expectStrataError(clash.what) {
                try await context.perform {
                    clash.insert(context)
                    try context.save()
                }
            }
            try kit.expectEqual(
                error.withoutNative, .constraintViolation(entity: clash.entity, attributes: clash.attributes),
                "the error for \(clash.what)")
            try kit.expect(error.native == nil, "\(clash.what): found before the engine was asked, got \(error)")
        }
        try await container.performUnitOfWork { context in
            for number in 1...40 { KitSeat(context: context).number = number }
            try context.save()
        }
        let stored = try await container.read { context in
            (try context.count(for: FetchRequest<KitAccount>()), try context.count(for: FetchRequest<KitSeat>()))
        }
        try kit.expect(
            stored == (0, 40), "stored accounts and seats: \(stored), expected none and the 40 nil-coded seats")
    }

    static func indexedQueries(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        let holders = ["zed", "amy", "", "émile", "amy", "Bob", "amy"]
        try await container.performUnitOfWork { context in
            for (index, holder) in holders.enumerated() {
                let seat = KitSeat(context: context)
                seat.row = "R"
                seat.number = index
                seat.holder = holder
            }
            try context.save()
        }
        let (amys, sorted, range) = try await container.read { context in
            let amys = try context.fetch(
                FetchRequest<KitSeat>(
                    predicate: #Predicate { $0.holder == "amy" }, sortBy: [SortDescriptor(\.number, order: .reverse)])
            ).map(\.number)
            let sorted = try context.fetch(
                FetchRequest<KitSeat>(sortBy: [SortDescriptor(\.holder), SortDescriptor(\.number)])
            ).map(\.holder)
            let range = try context.fetch(
                FetchRequest<KitSeat>(
                    predicate: #Predicate { $0.holder >= "amy" && $0.holder < "zed" },
                    sortBy: [SortDescriptor(\.holder)])
            ).map(\.holder)
            return (amys, sorted, range)
        }
        try kit.expectEqual(amys, [6, 4, 1], "seats held by amy, newest number first")
        try kit.expectEqual(sorted, ["", "Bob", "amy", "amy", "amy", "zed", "émile"], "holders in binary order")
        try kit.expectEqual(range, ["amy", "amy", "amy"], "holders in [amy, zed)")
    }
}
