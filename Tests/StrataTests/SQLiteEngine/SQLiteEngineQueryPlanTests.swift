import Foundation
import Strata
import StrataStorage
import Testing

@testable import StrataSQLite

/// The SQL a fetch plan becomes, and SQLite's plan for it (`EXPLAIN QUERY PLAN`): lookups on
/// indexed, unique and primary-key columns are index searches, checked rather than hoped for.
@Suite("SQLiteEngine SQL and query plans")
struct SQLiteEngineQueryPlanTests {
    static let account = Fixtures.account, txn = Fixtures.txn, sample = Fixtures.sample

    /// A plan and the `EXPLAIN QUERY PLAN` details it must produce, in order.
    struct Case: Sendable, CustomStringConvertible {
        let label: String
        let plan: FetchPlan
        let details: [String]
        var description: String { label }
    }

    static let cases: [Case] = [
        Case(
            label: "unique column equality",
            plan: FetchPlan(entity: account, filter: .compare(column: 0, .equal, .text("Checking"))),
            details: ["SEARCH Account USING INDEX Account_name_unique (name=?)"]),
        Case(
            label: "unique column two-sided range, sorted by it",
            plan: FetchPlan(
                entity: account,
                filter: .and([
                    .compare(column: 0, .greaterThanOrEqual, .text("b")), .compare(column: 0, .lessThan, .text("m")),
                ]), sort: [SortKey(column: 0, ascending: true)], limit: 10),
            details: ["SEARCH Account USING INDEX Account_name_unique (name>? AND name<?)"]),
        Case(
            label: "unique column one-sided range, sorted by it",
            plan: FetchPlan(
                entity: account, filter: .compare(column: 0, .greaterThan, .text("m")),
                sort: [SortKey(column: 0, ascending: true)]),
            details: ["SEARCH Account USING INDEX Account_name_unique (name>?)"]),
        Case(
            label: "unique column membership",
            plan: FetchPlan(entity: account, filter: .isIn(column: 0, values: [.text("a"), .text("b"), .text("c")])),
            details: ["SEARCH Account USING INDEX Account_name_unique (name=?)", "USE TEMP B-TREE FOR ORDER BY"]),
        Case(
            label: "sorted by the unique column, no filter",
            plan: FetchPlan(entity: account, sort: [SortKey(column: 0, ascending: true)]),
            details: ["SCAN Account USING INDEX Account_name_unique"]),
        Case(
            label: "reference equality", plan: FetchPlan(entity: txn, filter: .compare(column: 1, .equal, .integer(7))),
            details: ["SEARCH Txn USING INDEX Txn_account (account=?)"]),
        Case(
            label: "reference two-sided range",
            plan: FetchPlan(
                entity: txn,
                filter: .and([
                    .compare(column: 1, .greaterThan, .integer(3)), .compare(column: 1, .lessThanOrEqual, .integer(9)),
                ])),
            details: ["SEARCH Txn USING INDEX Txn_account (account>? AND account<?)", "USE TEMP B-TREE FOR ORDER BY"]),
        Case(
            label: "indexed text equality",
            plan: FetchPlan(entity: sample, filter: .compare(column: 2, .equal, .text("x"))),
            details: ["SEARCH Sample USING INDEX Sample_t (t=?)"]),
        Case(
            label: "primary key equality", plan: FetchPlan(entity: account, filter: .primaryKey(.equal, 5)),
            details: ["SEARCH Account USING INTEGER PRIMARY KEY (rowid=?)"]),
        Case(
            label: "primary key range",
            plan: FetchPlan(
                entity: account, filter: .and([.primaryKey(.greaterThan, 5), .primaryKey(.lessThan, 50)]), limit: 3,
                offset: 1),
            details: ["SEARCH Account USING INTEGER PRIMARY KEY (rowid>? AND rowid<?)"]),
        Case(
            label: "unindexed column (a scan, for contrast)",
            plan: FetchPlan(entity: account, filter: .compare(column: 1, .equal, .integer(5))),
            details: ["SCAN Account"]),
    ]

    @Test("indexed lookups are index searches", arguments: cases)
    func queryPlan(_ testCase: Case) throws {
        let store = try TemporarySQLiteStore()
        let engine = try store.open()
        defer { engine.close() }
        let reader = try #require(try engine.makeReader() as? SQLiteReader)
        defer { reader.close() }
        #expect(try reader.queryPlan(for: testCase.plan) == testCase.details)
    }

    @Test func aMembershipPastTheLimitSearchesTheIndexToo() throws {
        let store = try TemporarySQLiteStore()
        var options = SQLiteOptions()
        options.maximumVariables = 10
        let engine = try store.open(options: options)
        defer { engine.close() }
        let reader = try #require(try engine.makeReader() as? SQLiteReader)
        defer { reader.close() }
        let plan = FetchPlan(entity: Self.account, filter: .isIn(column: 0, values: (0..<20).map { .text("n\($0)") }))
        let details = try reader.queryPlan(for: plan)
        #expect(details.first == "SEARCH Account USING INDEX Account_name_unique (name=?)")
        #expect(details.contains("LIST SUBQUERY 1"), "\(details)")
    }

    /// The layout of the fixture schema's entity.
    private static func layout(_ entity: Int) -> SQLiteTableLayout {
        SQLiteTableLayout(entity: Fixtures.schema.entities[entity])
    }

    @Test func theSQLOfAFilteredSortedWindow() throws {
        let plan = FetchPlan(
            entity: Self.account, filter: .compare(column: 0, .equal, .text("x")),
            sort: [SortKey(column: 1, ascending: false)], limit: 5, offset: 2)
        let query = try SQLiteQuery.select(plan, table: Self.layout(Self.account), variableLimit: 32_766)
        #expect(
            query.sql
                == #"SELECT "id", "version", "name", "balance", "memo", "active" FROM "Account" WHERE ("name" "#
                + #"IS ?) ORDER BY "balance" DESC, "id" ASC LIMIT ? OFFSET ?"#
        )
        #expect(query.parameters == [.text("x"), .integer(5), .integer(2)])
        #expect(query.membershipLists.isEmpty)
    }

    @Test func theSQLOfNullChecksMembershipAndPrefix() throws {
        let filter = Filter.or([
            .isNull(column: 2),
            .and([
                .isIn(column: 0, values: [.text("a"), .integer(1), .text("b")]),
                .not(.hasPrefix(column: 2, prefix: "pre")),
            ]),
        ])
        let query = try SQLiteQuery.select(
            FetchPlan(entity: Self.account, filter: filter), table: Self.layout(Self.account), variableLimit: 32_766)
        #expect(
            query.sql
                == #"SELECT "id", "version", "name", "balance", "memo", "active" FROM "Account" WHERE (("memo" "#
                + #"IS NULL) OR (("name" IS NOT NULL AND "name" IN (?, ?)) AND (NOT ("memo" IS NOT NULL AND "#
                + #"coalesce(substr(CAST("memo" AS BLOB), 1, ?) = CAST(? AS BLOB), 0))))) ORDER BY "id" ASC"#
        )
        #expect(query.parameters == [.text("a"), .text("b"), .integer(3), .text("pre")])
    }

    @Test func theSQLOfAMembershipPastTheLimitAndOfACount() throws {
        let values: [StoredValue] = (0..<5).map { .integer(Int64($0)) }
        let plan = FetchPlan(entity: Self.txn, filter: .isIn(column: 0, values: values), limit: 1)
        let query = try SQLiteQuery.select(plan, table: Self.layout(Self.txn), variableLimit: 6)
        #expect(
            query.sql
                == #"SELECT "id", "version", "amount", "account", "note" FROM "Txn" WHERE ("amount" IS NOT "#
                + #"NULL AND "amount" IN (SELECT "value" FROM temp.strata_members WHERE "list" = 0)) ORDER BY "#
                + #""id" ASC LIMIT ? OFFSET ?"#
        )
        #expect(query.parameters == [.integer(1), .integer(0)])
        #expect(query.membershipLists == [values])
        let count = try SQLiteQuery.count(
            Self.layout(Self.txn), filter: .isIn(column: 0, values: values), variableLimit: 5)
        #expect(
            count.sql == #"SELECT count(*) FROM "Txn" WHERE ("amount" IS NOT NULL AND "amount" IN (?, ?, ?, ?, ?))"#)
    }
}
