import Foundation
import Strata

/// Batch inserts with an upsert policy: insert, update the listed attributes, or ignore, keyed on
/// a declared unique constraint.
enum UpsertChecks {
    static let group = "Upsert"

    static let all: [ConformanceCheck] = [
        ConformanceCheck(
            group, "an upsert updates the listed attributes of existing rows, bumps their versions, inserts the rest",
            updates),
        ConformanceCheck(
            group, "an ignoring upsert leaves existing rows alone; a repeat inside the batch counts as a clash",
            ignores),
        ConformanceCheck(
            group, "the conflict target must be a declared unique constraint; a compound one works", targets),
    ]

    static func updates(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        try await container.performUnitOfWork { context in
            try context.batchInsert(KitAccount.self, from: 0..<50) { index, values in
                values[\.name] = "n\(index)"
                values[\.balance] = 1
                values[\.note] = "original"
            }
            try context.save()
        }
        let stale = container.newBackgroundContext(named: "stale")
        try await stale.perform { _ = try stale.fetch(FetchRequest<KitAccount>()) }
        let results = try await container.performUnitOfWork { context in
            try context.batchInsert(
                KitAccount.self, from: 25..<75, onConflict: .update(matching: [\.name], setting: [\.balance])
            ) { index, values in
                values[\.name] = "n\(index)"
                values[\.balance] = Int64(index) * 10
                values[\.note] = "from upsert"
            }
            try context.save()
            return context.savedBatches
        }
        try kit.expectEqual(results[0].insertedCount, 25, "rows inserted")
        try kit.expectEqual(results[0].updatedCount, 25, "rows updated")
        let stored = try await container.read { context in
            try context.fetch(FetchRequest<KitAccount>()).map { "\($0.name) \($0.balance) \($0.note ?? "nil")" }
                .sorted()
        }
        let expected = (0..<75).map { index -> String in
            switch index {
            case ..<25: "n\(index) 1 original"
            case ..<50: "n\(index) \(index * 10) original"
            default: "n\(index) \(index * 10) from upsert"
            }
        }.sorted()
        try kit.expectEqual(stored, expected, "rows after the upsert (note kept on updated rows)")
        let error = try await kit.expectStrataError("saving a row the upsert updated from a stale context") {
            try await stale.perform {
                let account = try kit.first(
                    stale.fetch(FetchRequest<KitAccount>(predicate: #Predicate { $0.name == "n30" })), "accounts n30")
                account.note = "stale"
                try stale.save()
            }
        }
        guard case .conflict = error else { throw kit.fail("an upserted row's version went up: \(error)") }
    }

    static func ignores(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        _ = try await container.makeAccount("old", balance: 7)
        let results = try await container.performUnitOfWork { context in
            try context.batchInsert(
                KitAccount.self, from: [("old", 1), ("new", 2), ("new", 3)] as [(String, Int64)],
                onConflict: .ignore(matching: [\.name])
            ) { row, values in
                values[\.name] = row.0
                values[\.balance] = row.1
            }
            try context.save()
            return context.savedBatches
        }
        try kit.expectEqual(results[0].insertedCount, 1, "rows inserted")
        try kit.expectEqual(results[0].ignoredCount, 2, "rows ignored (the stored name and the repeat)")
        let stored = try await container.read { context in
            try context.fetch(FetchRequest<KitAccount>()).map { "\($0.name)=\($0.balance)" }.sorted()
        }
        try kit.expectEqual(stored, ["new=2", "old=7"], "rows after the ignoring upsert")
        // A repeat with .update: the later row updates the earlier one.
        try await container.performUnitOfWork { context in
            try context.batchInsert(
                KitAccount.self, from: [("twice", 1), ("twice", 9)] as [(String, Int64)],
                onConflict: .update(matching: [\.name], setting: [\.balance])
            ) { row, values in
                values[\.name] = row.0
                values[\.balance] = row.1
            }
            try context.save()
        }
        let twice = try await container.read { context in
            try context.fetch(FetchRequest<KitAccount>(predicate: #Predicate { $0.name == "twice" })).map(\.balance)
        }
        try kit.expectEqual(twice, [9], "a repeated key inside one upsert: one row, the later values")
    }

    static func targets(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        let error = try await kit.expectStrataError("an upsert matching on a non-unique attribute") {
            try await container.performUnitOfWork { context in
                try context.batchInsert(KitAccount.self, from: [1], onConflict: .ignore(matching: [\.balance])) {
                    _, values in values[\.name] = "x"
                }
            }
        }
        guard case .misuse(let message, _) = error, message.contains("unique") else {
            throw kit.fail("a non-unique conflict target gives .misuse naming the constraints, not \(error)")
        }
        try await container.performUnitOfWork { context in
            let seat = KitSeat(context: context)
            seat.row = "A"
            seat.number = 1
            seat.holder = "first"
            try context.save()
        }
        try await container.performUnitOfWork { context in
            try context.batchInsert(
                KitSeat.self, from: [("A", 1, "second"), ("A", 2, "third")],
                onConflict: .update(matching: [\.row, \.number], setting: [\.holder])
            ) { seat, values in
                values[\.row] = seat.0
                values[\.number] = seat.1
                values[\.holder] = seat.2
            }
            try context.save()
        }
        let seats = try await container.read { context in
            try context.fetch(FetchRequest<KitSeat>()).map { "\($0.row)\($0.number)=\($0.holder)" }.sorted()
        }
        try kit.expectEqual(seats, ["A1=second", "A2=third"], "seats after a compound-key upsert")
    }
}
