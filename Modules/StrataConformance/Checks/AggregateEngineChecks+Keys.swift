import Foundation
import Strata
import StrataStorage

/// Group values that an engine comparing bytes could get wrong: two text columns whose values
/// run together the same way ("ab" + "c", "a" + "bc"), texts holding control bytes, blobs of
/// the same bytes split differently, an empty value against a null one, -0.0 against 0.0, many
/// groups, sums and averages of texts and blobs, and an entity with no rows.
extension AggregateEngineChecks {
    /// Text pairs that run together the same way, or differ only where a value ends.
    static let textPairs: [(String, String?)] = [
        ("ab", "c"), ("a", "bc"), ("abc", ""), ("", "abc"), ("a\u{3}", ""), ("a", "\u{3}"), ("", "a\u{3}"),
        ("a", nil), ("a", ""), ("", nil), ("", ""), ("a\u{1}\u{3}", "b"), ("a", "\u{1}\u{3}b"),
        (String(repeating: "k", count: 20), "x"), (String(repeating: "k", count: 19), "kx"),
    ]

    /// Blob pairs in the same way.
    static let blobPairs: [(Data, Data?)] = [
        (Data([1]), Data([2, 3])), (Data([1, 2]), Data([3])), (Data(), nil), (Data(), Data()), (Data([1, 2, 3]), nil),
    ]

    static func keyEdges(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        try await container.performUnitOfWork { context in
            for index in 0..<300 {
                let sample = KitSample(context: context)
                let pair = textPairs[index % textPairs.count]
                sample.text = pair.0
                sample.optionalText = pair.1
                let blobs = blobPairs[index % blobPairs.count]
                sample.data = blobs.0
                sample.optionalData = blobs.1
                // -0.0 and 0.0 are one group; so are the nulls.
                sample.double = index % 3 == 0 ? -0.0 : index % 3 == 1 ? 0.0 : Double(index % 7)
                sample.optionalDouble = index % 4 == 0 ? nil : index % 4 == 1 ? -0.0 : 0.0
                // Many groups: the table holding them grows several times.
                sample.int = index
                sample.int64 = Int64(index % 150) - 75
                sample.optionalInt64 = index % 5 == 0 ? nil : Int64(index) * 1_000_003
            }
            try context.save()
        }
        let names = Columns(schema: KitModels.schema.storeSchema, kit: kit)
        let sample = try names.entity("Sample")
        let s = { (name: String) throws -> Int in try names.column(sample, name) }
        let text = try s("text")
        let optionalText = try s("optionalText")
        let data = try s("data")
        let optionalData = try s("optionalData")
        let double = try s("double")
        let optionalDouble = try s("optionalDouble")
        let int = try s("int")
        let int64 = try s("int64")
        let optionalInt64 = try s("optionalInt64")
        let functions: [AggregateFunction] = [
            .count, .countValues(column: optionalText), .sum(column: text), .average(column: optionalText),
            .sum(column: data), .average(column: optionalData), .sum(column: double), .minimum(column: double),
            .maximum(column: optionalDouble), .sum(column: int64), .average(column: optionalInt64),
            .minimum(column: optionalInt64), .maximum(column: int64), .countValues(column: optionalData),
        ]
        let groupings: [[Int]] = [
            [], [text], [optionalText], [text, optionalText], [optionalText, text], [data, optionalData],
            [optionalData, data], [double], [optionalDouble], [double, optionalDouble], [int], [int64],
            [optionalInt64], [text, int64], [int64, optionalText, optionalData],
        ]
        let engine = try kit.configuration.open(KitModels.schema.storeSchema)
        defer { engine.close() }
        let reader = try engine.makeReader()
        defer { reader.close() }
        for groupBy in groupings {
            for filter in [nil, .compare(column: int, .greaterThanOrEqual, .integer(0))] as [Filter?] {
                try expectReference(
                    AggregatePlan(entity: sample.number, filter: filter, groupBy: groupBy, functions: functions),
                    reader, kit)
            }
        }
        // Hand-counted groups: every text pair is its own group, -0.0 and 0.0 are one.
        let byPair = try reader.aggregate(
            AggregatePlan(entity: sample.number, groupBy: [text, optionalText], functions: [.count]))
        try kit.expectEqual(byPair.count, textPairs.count, "groups of (text, optionalText)")
        let byBlobs = try reader.aggregate(
            AggregatePlan(entity: sample.number, groupBy: [data, optionalData], functions: [.count]))
        try kit.expectEqual(byBlobs.count, blobPairs.count, "groups of (data, optionalData)")
        let byZero = try reader.aggregate(
            AggregatePlan(entity: sample.number, groupBy: [optionalDouble], functions: [.count]))
        try kit.expectEqual(byZero.map(\.values), [[.integer(75)], [.integer(225)]], "null, then -0.0 with 0.0")
        let byInt = try reader.aggregate(AggregatePlan(entity: sample.number, groupBy: [int], functions: [.count]))
        try kit.expectEqual(byInt.count, 300, "one group per distinct int")
        try kit.expectEqual(byInt.map(\.group), (0..<300).map { [.integer(Int64($0))] }, "int groups in order")
        // Texts and blobs are counted by a sum or an average and add nothing.
        let textSums = try reader.aggregate(
            AggregatePlan(entity: sample.number, functions: [.sum(column: text), .average(column: data)]))
        try kit.expectEqual(textSums.map(\.values), [[.integer(0), .real(0)]], "sum of texts, average of blobs")

        // An entity with no rows: one group without grouping, none with it.
        let member = try names.entity("Member")
        let org = try names.column(member, "org")
        let none = AggregatePlan(
            entity: member.number, functions: [.count, .sum(column: org), .minimum(column: org), .average(column: org)])
        try kit.expectEqual(
            try reader.aggregate(none), [AggregateRow(group: [], values: [.integer(0), .integer(0), .null, .null])],
            "aggregate(_:) over an empty entity")
        var grouped = none
        grouped.groupBy = [org]
        try kit.expectEqual(try reader.aggregate(grouped), [], "aggregate(_:) over an empty entity, grouped")
        try expectReference(none, reader, kit)
        try expectReference(grouped, reader, kit)
    }
}
