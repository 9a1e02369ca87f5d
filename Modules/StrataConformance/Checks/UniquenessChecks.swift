import Foundation
import Strata

/// Unique attributes and compound constraints hold against the store and inside one save;
/// nil never conflicts; indexed attributes filter and sort like the rest.
enum UniquenessChecks {
    static let all: [ConformanceCheck] = [
        ConformanceCheck("Uniqueness and indexes", "a unique attribute refuses a stored duplicate and writes nothing", storedDuplicate),
        ConformanceCheck("Uniqueness and indexes", "a compound constraint holds inside one save and against the store", compound),
        ConformanceCheck("Uniqueness and indexes", "nil values never conflict; a freed value can be reused", nilsAndReuse),
        ConformanceCheck("Uniqueness and indexes", "indexed attributes filter and sort like unindexed ones", indexedQueries),
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
        try kit.expectEqual(error, .constraintViolation(entity: "Account", attributes: ["name"]), "the error")
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
            try kit.expectEqual(error, .constraintViolation(entity: "Seat", attributes: ["row", "number"]), "the error")
        }
        try kit.expectEqual(try await container.read { try $0.count(for: FetchRequest<KitSeat>()) }, 4, "seats stored")
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
            let amys = try context.fetch(FetchRequest<KitSeat>(predicate: #Predicate { $0.holder == "amy" }, sortBy: [SortDescriptor(\.number, order: .reverse)])).map(\.number)
            let sorted = try context.fetch(FetchRequest<KitSeat>(sortBy: [SortDescriptor(\.holder), SortDescriptor(\.number)])).map(\.holder)
            let range = try context.fetch(FetchRequest<KitSeat>(predicate: #Predicate { $0.holder >= "amy" && $0.holder < "zed" }, sortBy: [SortDescriptor(\.holder)])).map(\.holder)
            return (amys, sorted, range)
        }
        try kit.expectEqual(amys, [6, 4, 1], "seats held by amy, newest number first")
        try kit.expectEqual(sorted, ["", "Bob", "amy", "amy", "amy", "zed", "émile"], "holders in binary order")
        try kit.expectEqual(range, ["amy", "amy", "amy"], "holders in [amy, zed)")
    }
}
