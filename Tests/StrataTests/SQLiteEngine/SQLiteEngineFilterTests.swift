import Foundation
import Strata
import StrataSQLite
import StrataStorage
import Testing

@Suite("SQLiteEngine filters and ordering match the reference")
struct SQLiteEngineFilterTests {
    static let texts: [String?] = [
        nil, "", "a", "A", "ab", "abc", "b", "é", "e\u{301}", "😀", "100%", "1_0", "%", "_", "a%c", "abc_d",
        "ä", "z", "Ω", "a\u{0}b", "\u{10FFFF}", "\u{FFFF}",
    ]

    /// Sample rows mixing nulls, negatives, unicode and LIKE metacharacters.
    static func sampleRows() -> [RowWrite] {
        texts.enumerated().map { offset, text in
            let n = Int64(offset)
            let integer: StoredValue = offset % 5 == 0 ? .null : .integer((n - 10) * (n % 2 == 0 ? 1 : 1_000_000_007))
            let real: StoredValue = offset % 4 == 1 ? .null : .real(Double(n) / 3 - 2)
            let blob: StoredValue =
                offset % 3 == 0 ? .null : .blob(Data(repeating: UInt8(offset % 4), count: offset % 3))
            let flag: StoredValue = offset % 6 == 5 ? .null : .integer(n % 2)
            return RowWrite(
                entity: Fixtures.sample, key: n + 1, expectedVersion: 0,
                values: [integer, real, text.map(StoredValue.text) ?? .null, blob, flag])
        }
    }

    static let filters: [Filter] = {
        var filters: [Filter] = [
            .constant(true), .constant(false), .and([]), .or([]),
            .isNull(column: 0), .isNotNull(column: 2), .not(.isNull(column: 3)),
            .primaryKey(.greaterThan, 5), .primaryKey(.equal, 3), .primaryKey(.lessThanOrEqual, 2),
            .isIn(column: 0, values: [.integer(2), .integer(-10), .real(-8)]),
            .isIn(column: 2, values: [.text("é"), .text("e\u{301}"), .text("")]),
            .isIn(column: 2, values: []), .not(.isIn(column: 2, values: [.text("a")])),
            .isIn(column: 2, values: [.integer(1)]),
            .compare(column: 2, .equal, .integer(5)), .compare(column: 2, .notEqual, .integer(5)),
            .compare(column: 0, .lessThan, .text("x")), .compare(column: 0, .greaterThan, .text("x")),
            .compare(column: 1, .greaterThan, .integer(0)), .compare(column: 0, .lessThanOrEqual, .real(0.5)),
            .compare(column: 3, .greaterThan, .blob(Data([0]))), .compare(column: 3, .equal, .blob(Data())),
            .compare(column: 4, .equal, .integer(1)), .not(.compare(column: 4, .equal, .integer(1))),
            .and([
                .isNotNull(column: 0), .or([.hasPrefix(column: 2, prefix: "a"), .contains(column: 2, substring: "%")]),
            ]),
            .not(.and([.compare(column: 0, .greaterThan, .integer(0)), .contains(column: 2, substring: "b")])),
        ]
        let probes = ["", "a", "A", "ab", "é", "e", "\u{301}", "%", "_", "1_", "a%", "😀", "a\u{0}", "z", "\u{FFFF}"]
        for probe in probes {
            filters.append(.contains(column: 2, substring: probe))
            filters.append(.hasPrefix(column: 2, prefix: probe))
            filters.append(.not(.contains(column: 2, substring: probe)))
            filters.append(.not(.hasPrefix(column: 2, prefix: probe)))
            for op in ComparisonOperator.allCases {
                filters.append(.compare(column: 2, op, .text(probe)))
                filters.append(.not(.compare(column: 2, op, .text(probe))))
            }
        }
        for op in ComparisonOperator.allCases {
            for value in [StoredValue.integer(0), .integer(-10), .real(-0.0), .real(1.5), .integer(.max)] {
                filters.append(.compare(column: 0, op, value))
                filters.append(.not(.compare(column: 0, op, value)))
                filters.append(.compare(column: 1, op, value))
                filters.append(.not(.compare(column: 1, op, value)))
            }
            filters.append(.primaryKey(op, 7))
        }
        return filters
    }()

    @Test func everyFilterMatchesTheReference() throws {
        let store = try TemporarySQLiteStore()
        let engine = try store.open()
        defer { engine.close() }
        try engine.commit(Fixtures.inserts(Self.sampleRows()))
        let all = try allRows(engine, Fixtures.sample)
        #expect(all.count == Self.texts.count)

        let reader = try engine.makeReader()
        defer { reader.close() }
        for filter in Self.filters {
            let plan = FetchPlan(entity: Fixtures.sample, filter: filter)
            let expected = plan.apply(to: all).map(\.key)
            #expect(try reader.rows(for: plan).map(\.key) == expected, "\(filter)")
            #expect(try reader.count(entity: Fixtures.sample, filter: filter) == expected.count, "\(filter)")
        }
    }

    @Test func sortLimitAndOffsetMatchTheReference() throws {
        let store = try TemporarySQLiteStore()
        let engine = try store.open()
        defer { engine.close() }
        try engine.commit(Fixtures.inserts(Self.sampleRows()))
        let all = try allRows(engine, Fixtures.sample)
        let reader = try engine.makeReader()
        defer { reader.close() }

        let sorts: [[SortKey]] = [
            [], [SortKey(column: 2, ascending: true)], [SortKey(column: 2, ascending: false)],
            [SortKey(column: 0, ascending: false), SortKey(column: 1, ascending: true)],
            [SortKey(column: 4, ascending: true), SortKey(column: 2, ascending: false)],
            [SortKey(column: 3, ascending: true)], [SortKey(column: 1, ascending: false)],
        ]
        let windows: [(Int?, Int)] = [(nil, 0), (5, 0), (5, 3), (nil, 4), (0, 0), (100, 0), (3, 100), (nil, 100)]
        for sort in sorts {
            for (limit, offset) in windows {
                for filter in [nil, Filter.isNotNull(column: 2)] {
                    let plan = FetchPlan(
                        entity: Fixtures.sample, filter: filter, sort: sort, limit: limit, offset: offset)
                    let expected = plan.apply(to: all)
                    #expect(try reader.rows(for: plan) == expected, "\(plan)")
                }
            }
        }
    }

    @Test func countWithoutFilterCountsEverything() throws {
        let store = try TemporarySQLiteStore()
        let engine = try store.open()
        defer { engine.close() }
        try engine.commit(Fixtures.inserts(Self.sampleRows()))
        let reader = try engine.makeReader()
        defer { reader.close() }
        #expect(try reader.count(entity: Fixtures.sample, filter: nil) == Self.texts.count)
        #expect(try reader.count(entity: Fixtures.account, filter: nil) == 0)
    }
}
