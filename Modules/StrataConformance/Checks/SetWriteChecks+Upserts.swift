import Foundation
import Strata
import StrataStorage

/// The set-write check of upserts: inserts with their keys, updates or ignores on a taken
/// unique value, and history (``SetWriteChecks``).
extension SetWriteChecks {
    static func upserts(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        let schema = KitModels.schema.storeSchema
        let names = AggregateEngineChecks.Columns(schema: schema, kit: kit)
        let seat = try names.entity("Seat")
        let rowColumn = try names.column(seat, "row")
        let number = try names.column(seat, "number")
        let holderColumn = try names.column(seat, "holder")
        let code = try names.column(seat, "code")
        let seeded = try await container.performUnitOfWork { context in
            let seats = (0..<3).map { index in
                let item = KitSeat(context: context)
                item.row = "A"
                item.number = index
                item.holder = "old"
                item.code = "C\(index)"
                return item
            }
            try context.save()
            return seats.compactMap(\.objectID.primaryKey)
        }
        let engine = try engine(kit)
        defer { engine.close() }
        let start = try token(engine)
        func seatRow(
            _ row: String, _ seatNumber: Int64, holder: String, code seatCode: String?
        ) -> ContiguousArray<StoredValue> {
            var values = ContiguousArray<StoredValue>(repeating: .null, count: seat.columns.count)
            values[rowColumn] = .text(row)
            values[number] = .integer(seatNumber)
            values[holderColumn] = .text(holder)
            values[code] = seatCode.map { .text($0) } ?? .null
            return values
        }
        // C0 gets a new holder, C1 has the same one (ignored), C9 and the null code are new.
        let rows = [
            seatRow("A", 0, holder: "new", code: "C0"), seatRow("A", 1, holder: "old", code: "C1"),
            seatRow("B", 9, holder: "new", code: "C9"), seatRow("B", 10, holder: "new", code: nil),
        ]
        let keys = Array(try engine.allocateKeys(entity: seat.number, count: rows.count))
        var changes = ChangeSet()
        changes.history = HistoryRecord(author: "kit", changes: [])
        changes.setWrites = [
            SetWrite(
                entity: seat.number, selection: .matching(nil),
                action: .upsert(
                    .init(rows: rows, keys: keys, uniqueColumns: [code], onClash: .update(columns: [holderColumn]))))
        ]
        let results = try engine.commitReturningResults(changes)
        try kit.expectEqual(results[0].keys, [seeded[0]], "the upsert updated C0")
        try kit.expectEqual(results[0].insertedKeys, [keys[2], keys[3]], "the upsert inserted C9 and the null code")
        try kit.expectEqual(results[0].ignoredCount, 1, "C1 had nothing to change")
        try kit.expectEqual(try row(engine, seat.number, seeded[0])?.values[holderColumn], .text("new"), "C0's holder")
        try kit.expectEqual(try row(engine, seat.number, seeded[0])?.version, 2, "C0's version")
        try kit.expectEqual(try row(engine, seat.number, seeded[1])?.version, 1, "C1's version")
        try kit.expectEqual(try row(engine, seat.number, keys[2])?.values[number], .integer(9), "C9 inserted")
        try kit.expectEqual(try row(engine, seat.number, keys[2])?.version, 1, "C9's version")
        try kit.expect(try row(engine, seat.number, keys[0]) == nil, "no row under the key of an updated row")
        if engine is any HistoryStore {
            let history = try lastHistory(engine, after: start)
            try kit.expectEqual(
                Set(history.map { "\($0.kind.rawValue) \($0.key)" }),
                ["update \(seeded[0])", "insert \(keys[2])", "insert \(keys[3])"], "the upsert's history")
        }

        // .ignore leaves a taken code alone; a new row that takes another unique index's values
        // (row A, number 2, held by C2) fails the whole commit.
        let moreKeys = Array(try engine.allocateKeys(entity: seat.number, count: 2))
        var ignoring = ChangeSet()
        ignoring.history = HistoryRecord(author: "kit", changes: [])
        ignoring.setWrites = [
            SetWrite(
                entity: seat.number, selection: .matching(nil),
                action: .upsert(
                    .init(
                        rows: [seatRow("A", 0, holder: "x", code: "C0"), seatRow("Z", 1, holder: "x", code: "C8")],
                        keys: moreKeys, uniqueColumns: [code], onClash: .ignore)))
        ]
        let ignored = try engine.commitReturningResults(ignoring)
        try kit.expectEqual(ignored[0].ignoredCount, 1, ".ignore counts the taken code")
        try kit.expectEqual(ignored[0].insertedKeys, [moreKeys[1]], ".ignore inserts the free one")
        try kit.expectEqual(try row(engine, seat.number, seeded[0])?.values[holderColumn], .text("new"), "C0 unchanged")

        let lastKeys = Array(try engine.allocateKeys(entity: seat.number, count: 2))
        var clashing = ChangeSet()
        clashing.history = HistoryRecord(author: "kit", changes: [])
        clashing.setWrites = [
            SetWrite(
                entity: seat.number, selection: .matching(nil),
                action: .upsert(
                    .init(
                        rows: [seatRow("Y", 1, holder: "x", code: "C7"), seatRow("A", 2, holder: "x", code: "C6")],
                        keys: lastKeys, uniqueColumns: [code], onClash: .update(columns: [holderColumn]))))
        ]
        let error = try kit.expectStrataError("an upsert row that takes another unique index's values") {
            _ = try engine.commitReturningResults(clashing)
        }
        guard case .constraintViolation(_, let attributes, _) = error, attributes == ["row", "number"] else {
            throw kit.fail("expected .constraintViolation on row and number, got \(error)")
        }
        try kit.expect(try row(engine, seat.number, lastKeys[0]) == nil, "the failed upsert inserted nothing")
    }
}
