import Foundation
import Strata
import StrataStorage

/// The engine's streamed reads: `StoreReader.forEachRow(for:_:)` must deliver exactly the rows
/// of `rows(for:)`, in the same order, for every plan shape — fetches go through it.
enum StreamingChecks {
    static let all: [ConformanceCheck] = [
        ConformanceCheck(
            "Fetch semantics",
            """
            streamed rows (forEachRow) equal row arrays (rows(for:)) and the reference plan; a known row count is \
            right
            """,
            streamedRows)
    ]

    static func streamedRows(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        _ = try await FetchChecks.seed(container)
        let storeSchema = KitModels.schema.storeSchema
        guard let account = storeSchema.entities.first(where: { $0.name == "Account" }) else {
            throw kit.fail("the kit schema has no Account entity")
        }
        func column(_ name: String) throws -> Int {
            guard let index = account.columns.firstIndex(where: { $0.name == name }) else {
                throw kit.fail("Account has no column \(name)")
            }
            return index
        }
        let balance = try column("balance")
        let name = try column("name")
        let note = try column("note")
        let entity = account.number
        let plans: [FetchPlan] = [
            FetchPlan(entity: entity),
            FetchPlan(entity: entity, filter: .compare(column: balance, .greaterThan, .integer(100))),
            FetchPlan(entity: entity, filter: .or([.isNull(column: note), .hasPrefix(column: name, prefix: "a")])),
            FetchPlan(entity: entity, sort: [SortKey(column: balance, ascending: false)]),
            FetchPlan(entity: entity, sort: [SortKey(column: note, ascending: true)], limit: 4, offset: 2),
            FetchPlan(entity: entity, limit: 3),
            FetchPlan(entity: entity, offset: 5),
            FetchPlan(entity: entity, limit: 0),
            FetchPlan(entity: entity, filter: .constant(false)),
        ]
        let engine = try kit.configuration.open(storeSchema)
        defer { engine.close() }
        let reader = try engine.makeReader()
        defer { reader.close() }
        let all = try reader.rows(for: FetchPlan(entity: entity))
        try kit.expectEqual(all.count, FetchChecks.names.count, "rows stored")
        for plan in plans {
            var streamed: [StoredRow] = []
            try reader.forEachRow(for: plan) { streamed.append($0) }
            try kit.expectEqual(streamed, try reader.rows(for: plan), "forEachRow against rows(for:) for \(plan)")
            try kit.expectEqual(streamed, plan.apply(to: all), "forEachRow against FetchPlan.apply for \(plan)")
            // An engine that knows a plan's row count without reading the rows must know it right
            // when the plan has no filter (with one, it may estimate).
            if plan.filter == nil, let expected = reader.expectedRowCount(for: plan) {
                try kit.expectEqual(expected, streamed.count, "expectedRowCount for \(plan)")
            }
        }
        // A throwing body stops the stream and its error reaches the caller unchanged.
        struct Stop: Error {}
        var delivered = 0
        do {
            try reader.forEachRow(for: FetchPlan(entity: entity)) { _ in
                delivered += 1
                if delivered == 2 { throw Stop() }
            }
            try kit.expect(false, "forEachRow swallowed the body's error")
        } catch is Stop {
            try kit.expectEqual(delivered, 2, "rows delivered before the body threw")
        }
    }
}
