import StrataStorage
import StrataTestSupport
import Testing

/// `FetchPlan.sortRows(_:)` puts rows in exactly the order `rowPrecedes(_:_:)` defines, on its
/// fast path (one key, all integers or all reals) and off it.
@Suite("FetchPlan.sortRows")
struct FetchPlanSortingTests {
    /// Values of one kind for column 0; ties are common, so the primary key decides often.
    enum Column: CaseIterable {
        case integers, reals, realsWithNaN, integersAndReals, withNulls, texts
    }

    static func value(_ column: Column, _ random: inout SeededGenerator) -> StoredValue {
        let small = Int64.random(in: -5...5, using: &random)
        switch column {
        case .integers: return .integer(small)
        case .reals: return .real(Double(small) / 2)
        case .realsWithNaN: return Int.random(in: 0..<10, using: &random) == 0 ? .real(.nan) : .real(Double(small))
        case .integersAndReals: return Bool.random(using: &random) ? .integer(small) : .real(Double(small) + 0.5)
        case .withNulls: return Int.random(in: 0..<4, using: &random) == 0 ? .null : .integer(small)
        case .texts: return .text(String(small))
        }
    }

    static func rows(_ column: Column, count: Int, seed: UInt64) -> [StoredRow] {
        var random = SeededGenerator(seed: seed)
        var keys = Array(Int64(1)..<Int64(count + 1))
        keys.shuffle(using: &random)
        return keys.map { key in
            StoredRow(
                key: key, version: 1,
                values: [value(column, &random), .integer(Int64.random(in: 0...3, using: &random))])
        }
    }

    @Test("one key, ascending and descending, on every kind of column", arguments: Column.allCases)
    func oneKey(_ column: Column) {
        for ascending in [true, false] {
            for (seed, count) in [(1, 0), (2, 1), (3, 2), (4, 50), (5, 1_000)] {
                let plan = FetchPlan(entity: 0, sort: [SortKey(column: 0, ascending: ascending)])
                var sorted = Self.rows(column, count: count, seed: UInt64(seed))
                let expected = sorted.sorted(by: plan.rowPrecedes)
                plan.sortRows(&sorted)
                #expect(sorted.map(\.key) == expected.map(\.key), "\(column), ascending \(ascending), \(count) rows")
            }
        }
    }

    @Test("extremes: -0.0 and 0.0 tie, infinities, Int64.min and Int64.max")
    func extremes() {
        let reals: [Double] = [0.0, -0.0, .infinity, -.infinity, 1, -1, 0.0, -0.0, .greatestFiniteMagnitude]
        let integers: [Int64] = [.max, .min, 0, -1, 1, .max, .min, 0]
        let columns: [[StoredValue]] = [reals.map { .real($0) }, integers.map { .integer($0) }]
        for values in columns {
            for ascending in [true, false] {
                let plan = FetchPlan(entity: 0, sort: [SortKey(column: 0, ascending: ascending)])
                var rows = values.enumerated().map {
                    StoredRow(key: Int64(values.count - $0), version: 1, values: [$1])
                }
                let expected = rows.sorted(by: plan.rowPrecedes)
                plan.sortRows(&rows)
                #expect(rows.map(\.key) == expected.map(\.key), "\(values), ascending \(ascending)")
            }
        }
    }

    @Test("two keys take the reference comparison", arguments: [Column.integers, .reals])
    func twoKeys(_ column: Column) {
        let plan = FetchPlan(
            entity: 0, sort: [SortKey(column: 1, ascending: false), SortKey(column: 0, ascending: true)])
        var sorted = Self.rows(column, count: 500, seed: 9)
        let expected = sorted.sorted(by: plan.rowPrecedes)
        plan.sortRows(&sorted)
        #expect(sorted.map(\.key) == expected.map(\.key))
    }

    @Test("a plan without sort keys leaves the rows as they are")
    func noKeys() {
        var rows = Self.rows(.integers, count: 100, seed: 11)
        let before = rows.map(\.key)
        FetchPlan(entity: 0).sortRows(&rows)
        #expect(rows.map(\.key) == before)
    }
}
