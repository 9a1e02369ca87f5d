import CSQLite
import Foundation
import Strata
import StrataStorage
import Testing

@testable import StrataSQLite

/// Membership filters with more constants than SQLite's parameter limit give the rows of the
/// reference semantics (`Filter.matches`, `FetchPlan.apply`). The limit is lowered to 50 on the
/// connections, so the path past the limit is taken on any SQLite build (a default build allows
/// 32,766 parameters, Debian's 250,000).
@Suite("SQLiteEngine large memberships")
struct SQLiteEngineMembershipTests {
    static let limit: Int32 = 50
    static let i = 0, r = 1, t = 2, b = 3, flag = 4

    /// 240 Sample rows with every storage class, nulls included.
    static func sampleRows() -> [RowWrite] {
        let texts = ["", "a", "A", "é", "e\u{301}", "😀", "zeta", "a\u{0}b"]
        return (1...240).map { key in
            let n = Int64(key)
            let values: [StoredValue] = [
                key % 11 == 0 ? .null : .integer(n % 2 == 0 ? n * 1_000_003 : -n),
                key % 13 == 0 ? .null : .real(Double(n) / 4),
                key % 7 == 0 ? .null : .text(texts[key % texts.count] + String(key % 30)),
                key % 9 == 0 ? .null : .blob(key % 5 == 0 ? Data() : Data([UInt8(key % 256), 0, UInt8(key % 3)])),
                key % 6 == 0 ? .null : .integer(n % 2),
            ]
            return RowWrite(entity: Fixtures.sample, key: n, expectedVersion: 0, values: ContiguousArray(values))
        }
    }

    /// Memberships larger than the limit: half hits, half misses, plus constants of other
    /// storage classes (which match nothing).
    static let plans: [(String, FetchPlan)] = {
        var ints: [StoredValue] = (1...120).map { n -> StoredValue in
            let value: Int64 = n % 2 == 0 ? Int64(n) * 1_000_003 : Int64(n) * 7
            return .integer(value)
        }
        ints += [.real(-3), .real(-5.5), .text("3")]
        var reals: [StoredValue] = (1...120).map { n -> StoredValue in .real(Double(n) * 0.75) }
        reals += [.integer(10), .integer(11), .blob(Data([1]))]
        var texts: [StoredValue] = []
        for n in 0..<30 {
            for prefix in ["", "a", "é", "😀", "a\u{0}b", "E"] { texts.append(.text(prefix + String(n))) }
        }
        texts.append(.integer(1))
        var blobs: [StoredValue] = (0..<90).map { n -> StoredValue in .blob(Data([UInt8(n), 0, UInt8(n % 3)])) }
        blobs += [.blob(Data()), .text("")]
        var bools: [StoredValue] = [.integer(1)]
        bools += (2...60).map { n -> StoredValue in .integer(Int64(n)) }
        let sample = Fixtures.sample
        return [
            ("integers", FetchPlan(entity: sample, filter: .isIn(column: i, values: ints))),
            (
                "reals, sorted descending",
                FetchPlan(
                    entity: sample, filter: .isIn(column: r, values: reals),
                    sort: [SortKey(column: r, ascending: false)])
            ),
            (
                "texts, sorted, offset 3 limit 17",
                FetchPlan(
                    entity: sample, filter: .isIn(column: t, values: texts),
                    sort: [SortKey(column: t, ascending: true)], limit: 17, offset: 3)
            ),
            ("blobs", FetchPlan(entity: sample, filter: .isIn(column: b, values: blobs))),
            ("bools", FetchPlan(entity: sample, filter: .isIn(column: flag, values: bools))),
            ("NOT texts", FetchPlan(entity: sample, filter: .not(.isIn(column: t, values: texts)))),
            (
                "NOT integers, limit 5",
                FetchPlan(entity: sample, filter: .not(.isIn(column: i, values: ints)), limit: 5)
            ),
            (
                "texts OR blobs, AND key > 20",
                FetchPlan(
                    entity: sample,
                    filter: .and([
                        .or([.isIn(column: t, values: texts), .isIn(column: b, values: blobs)]),
                        .primaryKey(.greaterThan, 20),
                    ]))
            ),
            (
                "integers AND NOT reals, sorted by t",
                FetchPlan(
                    entity: sample,
                    filter: .and([.isIn(column: i, values: ints), .not(.isIn(column: r, values: reals))]),
                    sort: [SortKey(column: t, ascending: true)])
            ),
        ]
    }()

    @Test("memberships past the parameter limit give the reference rows and counts")
    func membershipsPastTheLimit() throws {
        let store = try TemporarySQLiteStore()
        var options = SQLiteOptions()
        options.maximumVariables = Self.limit
        let engine = try store.open(options: options)
        defer { engine.close() }
        try engine.commit(Fixtures.inserts(Self.sampleRows()))
        let all = try allRows(engine, Fixtures.sample)
        #expect(all.count == 240)
        let layout = try #require(engine as? SQLiteEngine).tables[Fixtures.sample]

        let reader = try engine.makeReader()
        defer { reader.close() }
        for (label, plan) in Self.plans {
            // The plan really is past the limit, so it takes the temporary-table path.
            let query = try SQLiteQuery.select(plan, table: layout, variableLimit: Int(Self.limit))
            #expect(!query.membershipLists.isEmpty, "\(label) did not need the membership table")
            let expected = plan.apply(to: all)
            #expect(
                !expected.isEmpty && expected.count < all.count,
                "\(label) selects \(expected.count) of \(all.count) rows: not a telling case")
            // Twice on one reader: the lists of one query do not leak into the next.
            for _ in 0..<2 {
                let rows = try reader.rows(for: plan)
                #expect(rows.map(\.key) == expected.map(\.key), "\(label): keys")
                #expect(rows.map(\.values) == expected.map(\.values), "\(label): values")
                let matching = all.filter { plan.filter?.matches($0.values, key: $0.key) ?? true }.count
                #expect(try reader.count(entity: Fixtures.sample, filter: plan.filter) == matching, "\(label): count")
            }
        }
    }

    /// This SQLite build's parameter limit, read from a connection of its own.
    static func buildVariableLimit() -> Int {
        var db: OpaquePointer?
        defer { sqlite3_close_v2(db) }
        guard sqlite3_open_v2(":memory:", &db, SQLITE_OPEN_READWRITE, nil) == SQLITE_OK else { return 32_766 }
        return Int(sqlite3_limit(db, SQLITE_LIMIT_VARIABLE_NUMBER, -1))
    }

    @Test("a membership past this SQLite build's own parameter limit gives the right rows")
    func membershipPastTheBuildLimit() throws {
        let limit = Self.buildVariableLimit()
        print("SQLITE_LIMIT_VARIABLE_NUMBER of this build: \(limit)")
        let store = try TemporarySQLiteStore()
        let engine = try store.open()
        defer { engine.close() }
        try engine.commit(Fixtures.inserts((1...200).map { Fixtures.account(Int64($0), "name-\($0)") }))
        let names: [StoredValue] = (0...limit).map { n in
            .text(n.isMultiple(of: 4) && n <= 200 ? "name-\(n)" : "other-\(n)")
        }
        let reader = try engine.makeReader()
        defer { reader.close() }
        let plan = FetchPlan(
            entity: Fixtures.account, filter: .isIn(column: 0, values: names),
            sort: [SortKey(column: 0, ascending: false)], limit: 10, offset: 2)
        // Names name-4, name-8, … name-200, by name descending (byte order), skip 2, take 10.
        let expected = (1...50).map { Int64($0 * 4) }
            .sorted { "name-\($1)".utf8.lexicographicallyPrecedes("name-\($0)".utf8) }
            .dropFirst(2).prefix(10)
        #expect(try reader.rows(for: plan).map(\.key) == Array(expected))
        #expect(try reader.count(entity: Fixtures.account, filter: plan.filter) == 50)
    }

    @Test("a reader after one that used the membership table sees an empty table")
    func membershipTableIsEmptiedAfterUse() throws {
        let store = try TemporarySQLiteStore()
        var options = SQLiteOptions()
        options.maximumVariables = Self.limit
        let opened = try store.open(options: options)
        defer { opened.close() }
        let engine = try #require(opened as? SQLiteEngine)
        try engine.commit(Fixtures.inserts(Self.sampleRows()))
        let plan = Self.plans[0].1
        let first = try engine.makeReader()
        let expected = try first.rows(for: plan).map(\.key)
        first.close()
        // The same pooled connection: a query with other lists must not see the first ones.
        let second = try engine.makeReader()
        defer { second.close() }
        let other = FetchPlan(
            entity: Fixtures.sample, filter: .isIn(column: Self.i, values: (1000...1100).map { .integer(Int64($0)) }))
        #expect(try second.rows(for: other).isEmpty)
        #expect(try second.rows(for: plan).map(\.key) == expected)
    }

    @Test("wider filters of other leaves past the limit are a typed engine failure, not damage")
    func otherLeavesPastTheLimit() throws {
        let store = try TemporarySQLiteStore()
        var options = SQLiteOptions()
        options.maximumVariables = Self.limit
        let engine = try store.open(options: options)
        defer { engine.close() }
        let reader = try engine.makeReader()
        defer { reader.close() }
        let wide = Filter.or((1...80).map { .compare(column: Self.t, .equal, .text("v\($0)")) })
        let error = strataError { _ = try reader.rows(for: FetchPlan(entity: Fixtures.sample, filter: wide)) }
        guard case .engineFailure(let native) = error else {
            Issue.record("80 compared parameters over a limit of 50 gave \(String(describing: error))")
            return
        }
        #expect(native.engine == "sqlite" && native.code == 1 && native.message.contains("too many SQL variables"))
    }

    @Test("an OR of 3,000 leaves stays under SQLite's expression depth limit")
    func deepOr() throws {
        let store = try TemporarySQLiteStore()
        let engine = try store.open()
        defer { engine.close() }
        try engine.commit(Fixtures.inserts(Self.sampleRows()))
        let all = try allRows(engine, Fixtures.sample)
        let filter = Filter.or((1...3000).map { .compare(column: Self.i, .equal, .integer(Int64($0) * 1_000_003)) })
        let reader = try engine.makeReader()
        defer { reader.close() }
        let plan = FetchPlan(entity: Fixtures.sample, filter: filter)
        #expect(try reader.rows(for: plan).map(\.key) == plan.apply(to: all).map(\.key))
        #expect(
            try reader.count(entity: Fixtures.sample, filter: .not(filter)) == all.count - plan.apply(to: all).count)
    }
}
