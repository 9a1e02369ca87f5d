import Foundation
import Strata
import StrataStorage
import Testing

/// `forEachRow` over more rows than one batch of a streamed read (PostgreSQL reads a large plan
/// through a cursor, 2,000 rows per `FETCH`, issue 25): the rows of every plan shape are the
/// reference rows, and a body that throws midway leaves the reader usable, on every engine.
@Suite("Engine streamed reads")
struct EngineStreamReadTests {
    static let count: Int64 = 7_000

    static func txn(_ key: Int64) -> RowWrite {
        Fixtures.txn(key, amount: (key * 37) % 1_000, account: nil, note: key % 5 == 0 ? nil : "n\(key)")
    }

    /// The rows as stored: version 1.
    static let stored = (1...count).map { StoredRow(key: $0, version: 1, values: txn($0).values) }

    static func makeEngine(_ store: TestStore) throws -> any StorageEngine {
        let engine = try store.configuration.open(Fixtures.schema)
        try engine.commit(Fixtures.inserts((1...count).map(txn)))
        return engine
    }

    static func streamed(_ plan: FetchPlan, _ reader: any StoreReader) throws -> [StoredRow] {
        var rows: [StoredRow] = []
        try reader.forEachRow(for: plan) { rows.append($0) }
        return rows
    }

    @Test(
        "every row, filtered, sorted, windowed and small plans over 7,000 rows give the reference rows",
        arguments: EngineKind.allCases)
    func planShapes(kind: EngineKind) throws {
        let store = try TestStore(kind)
        let engine = try Self.makeEngine(store)
        defer { engine.close() }
        let reader = try engine.makeReader()
        defer { reader.close() }
        let amount = 0
        let note = 2
        let plans = [
            FetchPlan(entity: Fixtures.txn),
            FetchPlan(entity: Fixtures.txn, filter: .compare(column: amount, .greaterThanOrEqual, .integer(100))),
            FetchPlan(
                entity: Fixtures.txn, filter: .isNotNull(column: note),
                sort: [SortKey(column: amount, ascending: false)]),
            FetchPlan(
                entity: Fixtures.txn, sort: [SortKey(column: amount, ascending: true)], limit: 3_000, offset: 500),
            FetchPlan(entity: Fixtures.txn, sort: [SortKey(column: note, ascending: true)], offset: 6_990),
            FetchPlan(entity: Fixtures.txn, sort: [SortKey(column: amount, ascending: true)], limit: 10),
            FetchPlan(entity: Fixtures.txn, filter: .compare(column: amount, .lessThan, .integer(0))),
            // Around one batch (2,000 rows): exactly one, one more, and a limit past two.
            FetchPlan(entity: Fixtures.txn, sort: [SortKey(column: amount, ascending: false)], offset: 5_000),
            FetchPlan(entity: Fixtures.txn, sort: [SortKey(column: amount, ascending: false)], offset: 4_999),
            FetchPlan(entity: Fixtures.txn, sort: [SortKey(column: note, ascending: false)], limit: 4_001, offset: 1),
            FetchPlan(entity: Fixtures.txn, limit: 2_001, offset: 3),
        ]
        for plan in plans {
            let expected = plan.apply(to: Self.stored)
            #expect(try Self.streamed(plan, reader) == expected, "\(plan)")
            #expect(try reader.rows(for: plan) == expected, "\(plan)")
        }
    }

    struct Stop: Error {}

    @Test("a body that throws midway stops the read; the reader reads again, twice", arguments: EngineKind.allCases)
    func bodyThrows(kind: EngineKind) throws {
        let store = try TestStore(kind)
        let engine = try Self.makeEngine(store)
        defer { engine.close() }
        let reader = try engine.makeReader()
        defer { reader.close() }
        for _ in 0..<2 {
            var seen = 0
            #expect(throws: Stop.self) {
                try reader.forEachRow(for: FetchPlan(entity: Fixtures.txn)) { _ in
                    seen += 1
                    if seen == 2_500 { throw Stop() }
                }
            }
            #expect(seen == 2_500)
            #expect(try Self.streamed(FetchPlan(entity: Fixtures.txn), reader) == Self.stored)
            #expect(try reader.row(entity: Fixtures.txn, key: 7) == Self.stored[6])
        }
    }
}
