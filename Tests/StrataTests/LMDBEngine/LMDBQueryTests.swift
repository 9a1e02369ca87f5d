import Foundation
import Strata
import StrataStorage
import Testing

@testable import StrataLMDB

@Suite("LMDB queries match the reference FetchPlan.apply")
struct LMDBQueryTests {
    static let texts: [StoredValue] = [
        .null, .text(""), .text("a"), .text("a\0"), .text("ab"), .text("B"), .text("é"), .text("e\u{301}"), .text("🙂"),
        .text("Ch"), .text("Checking"),
    ]
    static let reals: [StoredValue] = [
        .null, .real(-0.0), .real(0.0), .real(1.5), .real(-2.25), .real(.infinity), .real(-.infinity), .real(3),
    ]
    static let ints: [StoredValue] = [.null, .integer(.min), .integer(-1), .integer(0), .integer(7), .integer(.max)]

    /// 60 Sample rows and 40 Txn rows with repeating, awkward values.
    static func populate(_ engine: any StorageEngine) throws {
        var changes = ChangeSet()
        for key in Int64(1)...60 {
            let n = Int(key)
            let values: ContiguousArray<StoredValue> = [
                ints[n % ints.count], reals[(n * 3) % reals.count], texts[(n * 7) % texts.count],
                n % 5 == 0 ? .null : .blob(Data([UInt8(n % 4), 0])), n % 3 == 0 ? .null : .text("code\(n)"),
            ]
            changes.inserts.append(
                RowWrite(entity: LMDBFixture.sample, key: key * 3, expectedVersion: 0, values: values))
        }
        for key in Int64(1)...5 {
            changes.inserts.append(
                RowWrite(
                    entity: LMDBFixture.account, key: key, expectedVersion: 0,
                    values: [.text("acct\(key)"), .integer(key * 100), .null]))
        }
        for key in Int64(1)...40 {
            let account: StoredValue = key % 7 == 0 ? .null : .integer(key % 5 + 1)
            changes.inserts.append(
                RowWrite(
                    entity: LMDBFixture.txn, key: key, expectedVersion: 0,
                    values: [.integer(key * 13 % 17 - 8), account]))
        }
        try engine.commit(changes)
    }

    static let sampleFilters: [Filter?] = {
        var filters: [Filter?] = [nil, .constant(true), .constant(false)]
        for column in 0..<5 { filters += [.isNull(column: column), .isNotNull(column: column)] }
        for op in ComparisonOperator.allCases {
            for value in texts where !value.isNull { filters.append(.compare(column: 2, op, value)) }
            for value in reals where !value.isNull { filters.append(.compare(column: 1, op, value)) }
            for value in ints where !value.isNull { filters.append(.compare(column: 0, op, value)) }
            filters.append(.compare(column: 1, op, .integer(1)))
            filters.append(.compare(column: 0, op, .real(0.5)))
            filters.append(.compare(column: 3, op, .blob(Data([1, 0]))))
            filters.append(.compare(column: 4, op, .text("code10")))
            filters.append(.primaryKey(op, 30))
        }
        filters += [
            .hasPrefix(column: 2, prefix: "a"), .hasPrefix(column: 2, prefix: ""), .hasPrefix(column: 2, prefix: "C"),
            .hasPrefix(column: 4, prefix: "code1"), .contains(column: 2, substring: "h"),
            .contains(column: 2, substring: ""),
            .isIn(column: 2, values: [.text("a"), .text("é"), .text("zzz")]), .isIn(column: 2, values: []),
            .isIn(column: 1, values: [.real(0), .real(.infinity)]),
            .isIn(column: 0, values: [.integer(0), .integer(7)]),
            .isIn(column: 1, values: [.integer(3)]),
            .and([.compare(column: 2, .greaterThanOrEqual, .text("a")), .compare(column: 0, .lessThan, .integer(7))]),
            .and([.primaryKey(.greaterThan, 20), .primaryKey(.lessThanOrEqual, 100)]),
            .and([.primaryKey(.greaterThan, 20), .isNotNull(column: 4)]),
            .or([.compare(column: 2, .equal, .text("B")), .compare(column: 1, .greaterThan, .real(1))]),
            .or([.compare(column: 2, .equal, .text("B")), .isNull(column: 0)]),
            .not(.compare(column: 2, .equal, .text("a"))),
            .not(.isIn(column: 1, values: [.real(-0.0)])),
        ]
        return filters
    }()

    static let sorts: [[SortKey]] = [
        [], [SortKey(column: 2, ascending: true)], [SortKey(column: 2, ascending: false)],
        [SortKey(column: 1, ascending: true), SortKey(column: 0, ascending: false)],
        [SortKey(column: 3, ascending: false)], [SortKey(column: 4, ascending: true)],
    ]

    static let windows: [(limit: Int?, offset: Int)] = [(nil, 0), (5, 0), (3, 4), (nil, 7), (0, 0), (100, 50)]

    @Test("filters, sorts, limits and offsets give exactly the reference rows")
    func sampleQueries() throws {
        let engine = try LMDBFixture.open(LMDBFixture.directory())
        defer { engine.close() }
        try Self.populate(engine)
        let all = try LMDBFixture.allRows(engine, LMDBFixture.sample)
        #expect(all.count == 60)
        let reader = try engine.makeReader()
        defer { reader.close() }
        for filter in Self.sampleFilters {
            let expectedCount = FetchPlan(entity: LMDBFixture.sample, filter: filter).apply(to: all).count
            #expect(
                try reader.count(entity: LMDBFixture.sample, filter: filter) == expectedCount,
                "count \(String(describing: filter))")
            for sort in Self.sorts {
                for window in Self.windows {
                    let plan = FetchPlan(
                        entity: LMDBFixture.sample, filter: filter, sort: sort, limit: window.limit,
                        offset: window.offset)
                    let rows = try reader.rows(for: plan)
                    #expect(rows == plan.apply(to: all), "\(plan)")
                }
            }
        }
    }

    @Test("reference-column lookups (the to-many side) use the index and match the reference")
    func referenceLookups() throws {
        let engine = try LMDBFixture.open(LMDBFixture.directory())
        defer { engine.close() }
        try Self.populate(engine)
        let all = try LMDBFixture.allRows(engine, LMDBFixture.txn)
        let reader = try engine.makeReader()
        defer { reader.close() }
        var filters: [Filter] = [.isNull(column: 1), .isIn(column: 1, values: [.integer(2), .integer(4)])]
        for account in Int64(0)...6 {
            filters.append(.compare(column: 1, .equal, .integer(account)))
            filters.append(.compare(column: 1, .greaterThan, .integer(account)))
            filters.append(
                .and([.compare(column: 1, .equal, .integer(account)), .compare(column: 0, .lessThan, .integer(0))]))
        }
        let lmdb = try #require(engine as? LMDBEngine)
        for filter in filters {
            // The planner's own account of the access path: a range scan of the reference index.
            let chosen = try lmdb.explain(FetchPlan(entity: LMDBFixture.txn, filter: filter))
            guard case .indexScan(let indexes) = chosen, !indexes.isEmpty,
                indexes.allSatisfy({ $0.hasPrefix("r.") || $0.hasPrefix("i.") })
            else {
                Issue.record("\(filter) does not use the reference index: \(chosen)")
                continue
            }
            for sort in [[], [SortKey(column: 0, ascending: false)]] {
                let plan = FetchPlan(entity: LMDBFixture.txn, filter: filter, sort: sort, limit: 4, offset: 1)
                #expect(try reader.rows(for: plan) == plan.apply(to: all), "\(plan)")
                let unbounded = FetchPlan(entity: LMDBFixture.txn, filter: filter, sort: sort)
                #expect(try reader.rows(for: unbounded) == unbounded.apply(to: all), "\(unbounded)")
            }
        }
    }

    @Test("explain names the access path: an index for indexed columns, a key range for keys, a scan otherwise")
    func explainedPlans() throws {
        let engine = try LMDBFixture.open(LMDBFixture.directory())
        defer { engine.close() }
        let lmdb = try #require(engine as? LMDBEngine)
        let txn = LMDBFixture.txn
        #expect(try lmdb.explain(FetchPlan(entity: txn)) == .keyScan(lower: 1, upper: .max))
        #expect(
            try lmdb.explain(FetchPlan(entity: txn, filter: .compare(column: 0, .lessThan, .integer(0))))
                == .keyScan(lower: 1, upper: .max))
        #expect(
            try lmdb.explain(FetchPlan(entity: txn, filter: .primaryKey(.greaterThan, 5)))
                == .keyScan(lower: 6, upper: .max))
        #expect(try lmdb.explain(FetchPlan(entity: txn, filter: .constant(false))) == .nothing)
        #expect(try lmdb.explain(FetchPlan(entity: txn, filter: .primaryKey(.lessThan, .min))) == .nothing)
        let indexed = try lmdb.explain(FetchPlan(entity: txn, filter: .compare(column: 1, .equal, .integer(2))))
        guard case .indexScan(let names) = indexed else {
            Issue.record("an equality on the reference column should scan its index, got \(indexed)")
            return
        }
        #expect(names.count == 1)
        #expect(throws: StrataError.self) { try lmdb.explain(FetchPlan(entity: 99)) }
    }

    @Test("a plan naming a column the entity lacks is refused with misuse, not a trap")
    func outOfRangeColumns() throws {
        let engine = try LMDBFixture.open(LMDBFixture.directory())
        defer { engine.close() }
        try LMDBFixture.insert(engine, LMDBFixture.account, 1, [.text("a"), .integer(1), .null])
        let reader = try engine.makeReader()
        defer { reader.close() }
        let plans = [
            FetchPlan(entity: LMDBFixture.account, sort: [SortKey(column: 3, ascending: true)]),
            FetchPlan(entity: LMDBFixture.account, filter: .compare(column: -1, .equal, .integer(1))),
            FetchPlan(
                entity: LMDBFixture.account, filter: .not(.or([.isNull(column: 0), .isNotNull(column: Int.max)]))),
        ]
        for (number, plan) in plans.enumerated() {
            expectMisuse("rows(for:) with plan \(number)") { _ = try reader.rows(for: plan) }
            expectMisuse("forEachRow with plan \(number)") { try reader.forEachRow(for: plan) { _ in } }
        }
        expectMisuse("count with column 7") {
            _ = try reader.count(entity: LMDBFixture.account, filter: .isNull(column: 7))
        }
    }

    /// Records an issue unless `body` throws `StrataError.misuse`.
    private func expectMisuse(
        _ call: String, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void
    ) {
        let error = strataError(sourceLocation: sourceLocation, body)
        guard case .misuse = error else {
            Issue.record(
                "\(call): expected StrataError.misuse, got \(error.map { String(reflecting: $0) } ?? "no error")",
                sourceLocation: sourceLocation)
            return
        }
    }

    @Test(
        """
        the expected row count of an unfiltered plan is the entry count, trimmed by offset and limit; with a \
        filter it is unknown
        """
    )
    func expectedRowCount() throws {
        let engine = try LMDBFixture.open(LMDBFixture.directory())
        defer { engine.close() }
        for key in Int64(1)...30 {
            try LMDBFixture.insert(engine, LMDBFixture.account, key, [.text("a\(key)"), .integer(key), .null])
        }
        let reader = try engine.makeReader()
        defer { reader.close() }
        let entity = LMDBFixture.account
        #expect(reader.expectedRowCount(for: FetchPlan(entity: entity)) == 30)
        #expect(reader.expectedRowCount(for: FetchPlan(entity: entity, limit: 7)) == 7)
        #expect(reader.expectedRowCount(for: FetchPlan(entity: entity, offset: 25)) == 5)
        #expect(reader.expectedRowCount(for: FetchPlan(entity: entity, limit: 10, offset: 25)) == 5)
        #expect(reader.expectedRowCount(for: FetchPlan(entity: entity, offset: 40)) == 0)
        #expect(
            reader.expectedRowCount(
                for: FetchPlan(entity: entity, filter: .compare(column: 1, .greaterThan, .integer(3)))) == nil)
        #expect(reader.expectedRowCount(for: FetchPlan(entity: LMDBFixture.txn)) == 0)
    }
}
