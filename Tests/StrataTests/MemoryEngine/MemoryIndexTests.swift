import Foundation
import StrataMemory
import StrataStorage
import StrataTestSupport
import Testing

/// The in-memory engine's ordered lookups, checked against the reference semantics: every
/// filter's rows and count, through a lookup range, a key range or a scan, equal what
/// ``StrataStorage/Filter/matches(_:key:)`` selects from all rows, before and after rows are
/// updated and deleted, and a reader taken earlier keeps its answers.
@Suite("in-memory engine: lookups answer as the reference filter")
struct MemoryIndexTests {
    /// Sample: score (integer, indexed), weight (real, indexed), tag (text, indexed), owner
    /// (reference, indexed), note (text, not indexed); every column optional.
    static let schema = StoreSchema(
        version: 1,
        entities: [
            EntitySchema(
                name: "Sample", number: 0,
                columns: [
                    ColumnSchema(name: "score", type: .int64, isOptional: true),
                    ColumnSchema(name: "weight", type: .double, isOptional: true),
                    ColumnSchema(name: "tag", type: .string, isOptional: true),
                    ColumnSchema(name: "owner", type: .reference, isOptional: true, referencedEntity: 0),
                    ColumnSchema(name: "note", type: .string, isOptional: true),
                ],
                indexes: [
                    IndexSchema(name: "Sample_score", columns: [0], isUnique: false),
                    IndexSchema(name: "Sample_weight", columns: [1], isUnique: false),
                    IndexSchema(name: "Sample_tag", columns: [2, 0], isUnique: false),
                    IndexSchema(name: "Sample_owner", columns: [3], isUnique: false),
                ])
        ], joins: [])

    static let scores: [StoredValue] = [.null] + (-3...6).map { .integer(Int64($0)) }
    static let weights: [StoredValue] = [.null, .real(-0.0), .real(0.0), .real(0.5), .real(-2.25), .real(7)]
    static let tags: [StoredValue] = [.null, .text(""), .text("a"), .text("ab"), .text("b"), .text("é")]

    static func values(_ random: inout SeededGenerator) -> ContiguousArray<StoredValue> {
        [
            scores.randomElement(using: &random) ?? .null, weights.randomElement(using: &random) ?? .null,
            tags.randomElement(using: &random) ?? .null,
            Bool.random(using: &random) ? .integer(Int64.random(in: 1...5, using: &random)) : .null,
            .text("n\(Int.random(in: 0...3, using: &random))"),
        ]
    }

    /// Filters over every column, operator and probe value, with probes absent from the rows,
    /// values of another storage class, duplicates and nulls in memberships, key ranges and ands.
    static var filters: [Filter] {
        var filters: [Filter] = []
        let probes: [(Int, [StoredValue])] = [
            (0, [.integer(-4), .integer(0), .integer(2), .integer(6), .integer(9), .real(2.0), .real(2.5)]),
            (1, [.real(0.0), .real(-0.0), .real(0.5), .real(-3), .real(8), .integer(7)]),
            (2, [.text(""), .text("a"), .text("aa"), .text("é"), .text("z")]),
            (3, [.integer(1), .integer(3), .integer(9)]),
            (4, [.text("n1")]),
        ]
        for (column, values) in probes {
            for value in values {
                for comparison in ComparisonOperator.allCases {
                    filters.append(.compare(column: column, comparison, value))
                }
            }
            filters.append(.isIn(column: column, values: values + values.prefix(2) + [.null]))
            filters.append(.isIn(column: column, values: []))
        }
        for comparison in ComparisonOperator.allCases {
            for key in [Int64(-1), 0, 1, 37, 120, 500, .max] { filters.append(.primaryKey(comparison, key)) }
        }
        filters.append(
            .and([.compare(column: 3, .equal, .integer(2)), .compare(column: 0, .greaterThan, .integer(1))]))
        filters.append(
            .and([.compare(column: 1, .lessThanOrEqual, .real(0)), .compare(column: 2, .equal, .text("a"))]))
        filters.append(.and([.primaryKey(.greaterThan, 50), .isIn(column: 0, values: [.integer(1), .integer(5)])]))
        filters.append(.and([.compare(column: 0, .lessThan, .integer(100)), .isNull(column: 3)]))
        filters.append(.or([.compare(column: 0, .equal, .integer(1)), .hasPrefix(column: 2, prefix: "a")]))
        return filters
    }

    /// Every filter's rows (in key order, and in any order) and count from `reader`, against the
    /// reference over `all`.
    static func check(_ reader: any StoreReader, against all: [StoredRow], _ stage: String) throws {
        for filter in filters {
            let expected = all.filter { filter.matches($0.values, key: $0.key) }.map(\.key)
            let rows = try reader.rows(for: FetchPlan(entity: 0, filter: filter))
            #expect(rows.map(\.key) == expected, "\(stage): rows of \(filter)")
            let anyOrder = try reader.rows(for: FetchPlan(entity: 0, filter: filter, inKeyOrder: false))
            #expect(anyOrder.map(\.key).sorted() == expected, "\(stage): rows in any order of \(filter)")
            #expect(try reader.count(entity: 0, filter: filter) == expected.count, "\(stage): count of \(filter)")
        }
    }

    @Test("rows and counts of every filter equal the reference, before and after updates and deletes")
    func lookupsMatchTheReference() throws {
        let engine = try EngineConfiguration.inMemory(name: "index-\(UUID())").open(Self.schema)
        defer { engine.close() }
        var random = SeededGenerator(seed: 26)
        var inserts = ChangeSet()
        inserts.inserts = (1...400).map {
            RowWrite(entity: 0, key: $0, expectedVersion: 0, values: Self.values(&random))
        }
        // The highest key there is, holding probed values: a lookup range must not lose it.
        inserts.inserts.append(
            RowWrite(
                entity: 0, key: .max, expectedVersion: 0,
                values: [.integer(2), .real(0.5), .text("a"), .integer(3), .text("n1")]))
        try engine.commit(inserts)

        let early = try engine.makeReader()
        defer { early.close() }
        let earlyRows = try early.rows(for: FetchPlan(entity: 0))
        try Self.check(early, against: earlyRows, "after the inserts")

        var changes = ChangeSet()
        for key in Int64(1)...400 where key.isMultiple(of: 3) {
            changes.updates.append(RowWrite(entity: 0, key: key, expectedVersion: 1, values: Self.values(&random)))
        }
        for key in Int64(1)...400 where key.isMultiple(of: 7) && !key.isMultiple(of: 3) {
            changes.deletes.append(RowVersionCheck(entity: 0, key: key, expectedVersion: 1))
        }
        try engine.commit(changes)

        let late = try engine.makeReader()
        defer { late.close() }
        let lateRows = try late.rows(for: FetchPlan(entity: 0))
        #expect(lateRows.count == 401 - changes.deletes.count)
        try Self.check(late, against: lateRows, "after the updates and deletes")
        // The reader taken before the second commit still answers as it did.
        try Self.check(early, against: earlyRows, "an earlier reader")
    }
}
