import Foundation
import StrataStorage
import StrataTestSupport
import Testing

@testable import StrataPostgres

/// A filtered read of 0 to 4,500 rows, around the streamed batch (2,000 rows a `FETCH`), gives
/// exactly the reference rows, in order, each once, and a read that stops part-way leaves the
/// reader usable.
@Suite("PostgresEngine filtered reads around the streamed batch")
struct PostgresFilteredReadTests {
    static let rowCount: Int64 = 4_500
    static let sizes: [Int64] = [0, 1, 1_999, 2_000, 2_001, 4_001, rowCount]

    /// Entries 1...rowCount, as the batch insert tests make them.
    static func fill(_ engine: PostgresEngine) throws {
        var changes = ChangeSet()
        changes.inserts = (1...rowCount).map { PostgresBatchInsertTests.entry($0) }
        try engine.commit(changes)
    }

    @Test("reads of 0 to 4,500 matching rows, in key order, sorted and in any order, match the reference")
    func aroundTheBatch() async throws {
        let mismatches = try await PostgresBatchInsertTests.withEngine { engine in
            try Self.fill(engine)
            let all = try PostgresBatchInsertTests.allRows(engine, entity: 0)
            let reader = try engine.makeReader()
            defer { reader.close() }
            var mismatches: [String] = []
            for size in Self.sizes {
                let filter = Filter.primaryKey(.lessThanOrEqual, size)
                let plans = [
                    FetchPlan(entity: 0, filter: filter),
                    FetchPlan(entity: 0, filter: filter, sort: [SortKey(column: 0, ascending: false)]),
                    FetchPlan(entity: 0, filter: filter, inKeyOrder: false),
                    // A batch fault's shape: a membership of keys, in any order.
                    FetchPlan(
                        entity: 0, filter: .isIn(column: 2, values: (0...size).map { .integer(-$0) }),
                        inKeyOrder: false),
                ]
                for plan in plans {
                    var rows = try reader.rows(for: plan)
                    var expected = plan.apply(to: all)
                    if plan.allowsAnyOrder {
                        rows.sort { $0.key < $1.key }
                        expected.sort { $0.key < $1.key }
                    }
                    let sized = if case .primaryKey = plan.filter { rows.count == Int(size) } else { true }
                    if rows != expected || !sized {
                        mismatches.append("\(plan): \(rows.count) rows, expected \(expected.count)")
                    }
                }
            }
            return mismatches
        }
        #expect(mismatches.isEmpty, "\(mismatches)")
    }

    @Test("a read stopped part-way, below and above one batch, leaves the reader usable")
    func stoppedReads() async throws {
        let counts = try await PostgresBatchInsertTests.withEngine { engine in
            try Self.fill(engine)
            let reader = try engine.makeReader()
            defer { reader.close() }
            struct Stop: Error {}
            var counts: [Int] = []
            for size: Int64 in [1_500, 3_000] {
                var seen = 0
                do {
                    try reader.forEachRow(for: FetchPlan(entity: 0, filter: .primaryKey(.lessThanOrEqual, size))) { _ in
                        seen += 1
                        if seen == 1_000 { throw Stop() }
                    }
                } catch is Stop {}
                counts.append(seen)
                counts.append(try reader.rows(for: FetchPlan(entity: 0, filter: .primaryKey(.greaterThan, 10))).count)
            }
            return counts
        }
        #expect(counts == [1_000, 4_490, 1_000, 4_490])
    }
}
