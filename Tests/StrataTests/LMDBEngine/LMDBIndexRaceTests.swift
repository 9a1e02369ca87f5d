import Foundation
import Strata
import StrataStorage
import Testing

@testable import StrataLMDB

/// A conjunction that two indexes could serve reads the one whose ranges hold fewer entries in
/// the store, not the one an equality ranks first, and gives the reference rows either way.
@Suite("LMDB conjunctions race their candidate indexes")
struct LMDBIndexRaceTests {
    /// 2,000 Sample rows: `t` is "common" but for keys 1...3 ("rare"), `r` is the key as a real.
    static func populate(_ engine: any StorageEngine) throws {
        var changes = ChangeSet()
        for key in Int64(1)...2_000 {
            let values: ContiguousArray<StoredValue> = [
                .integer(key % 7), .real(Double(key)), .text(key <= 3 ? "rare" : "common"), .null, .null,
            ]
            changes.inserts.append(RowWrite(entity: LMDBFixture.sample, key: key, expectedVersion: 0, values: values))
        }
        try engine.commit(changes)
    }

    static let t = 2, r = 1

    static func equal(_ text: String) -> Filter { .compare(column: t, .equal, .text(text)) }
    static func above(_ real: Double) -> Filter { .compare(column: r, .greaterThan, .real(real)) }
    static func below(_ real: Double) -> Filter { .compare(column: r, .lessThan, .real(real)) }

    /// Filters with the index a read should scan, and why.
    static let cases: [(filter: Filter, indexes: [String], why: String)] = [
        (.and([equal("common"), above(1_990)]), ["i.Sample_r"], "10 rows above 1,990 against 1,997 common"),
        (.and([above(1_990), equal("common")]), ["i.Sample_r"], "the same, the range written first"),
        (.and([equal("rare"), above(1)]), ["i.Sample_t"], "3 rare rows against 1,999 above 1"),
        (.and([equal("common"), above(0)]), ["i.Sample_t"], "both hold over 512 entries: the equality's rank"),
        (.and([equal("common"), above(5_000)]), ["i.Sample_r"], "an empty range against 1,997 common"),
        (
            .and([.isIn(column: t, values: [.text("rare"), .text("common")]), above(1_995)]), ["i.Sample_r"],
            "a membership of 2,000 rows against 5 above 1,995"
        ),
        (
            .and([.isIn(column: t, values: [.text("absent"), .text("rare")]), below(2.5)]), ["i.Sample_r"],
            "a membership whose first range holds nothing, then 3 rows, against 2"
        ),
        (.and([equal("rare"), below(3.5)]), ["i.Sample_t"], "a tie, 3 against 3: the better rank"),
        (
            .or([.and([equal("common"), above(1_998)]), .and([equal("rare"), above(0)])]),
            ["i.Sample_r", "i.Sample_t"], "each and of an or raced on its own"
        ),
    ]

    @Test("explain names the smaller candidate, and every read gives the reference rows")
    func racedConjunctions() throws {
        let engine = try LMDBFixture.open(LMDBFixture.directory())
        defer { engine.close() }
        try Self.populate(engine)
        let lmdb = try #require(engine as? LMDBEngine)
        let all = try LMDBFixture.allRows(engine, LMDBFixture.sample)
        #expect(all.count == 2_000)
        let reader = try engine.makeReader()
        defer { reader.close() }
        for race in Self.cases {
            let chosen = try lmdb.explain(FetchPlan(entity: LMDBFixture.sample, filter: race.filter))
            #expect(chosen == .indexScan(indexes: race.indexes), "\(race.why): \(race.filter)")
            let expected = FetchPlan(entity: LMDBFixture.sample, filter: race.filter).apply(to: all)
            #expect(!expected.isEmpty || race.why.contains("empty"), "the case has rows to find: \(race.why)")
            #expect(try reader.count(entity: LMDBFixture.sample, filter: race.filter) == expected.count, "\(race.why)")
            for sort in [[], [SortKey(column: 0, ascending: false), SortKey(column: Self.r, ascending: true)]] {
                for window in [(nil, 0), (3, 2)] as [(Int?, Int)] {
                    let plan = FetchPlan(
                        entity: LMDBFixture.sample, filter: race.filter, sort: sort, limit: window.0,
                        offset: window.1)
                    #expect(try reader.rows(for: plan) == plan.apply(to: all), "\(race.why): \(plan)")
                }
            }
        }
    }

    @Test("a race follows the store: the choice changes when the rows do")
    func raceFollowsTheStore() throws {
        let engine = try LMDBFixture.open(LMDBFixture.directory())
        defer { engine.close() }
        try Self.populate(engine)
        let lmdb = try #require(engine as? LMDBEngine)
        let filter = Filter.and([Self.equal("rare"), Self.above(1_990)])
        // 3 rare rows against 10 above 1,990: the equality's index.
        #expect(
            try lmdb.explain(FetchPlan(entity: LMDBFixture.sample, filter: filter))
                == .indexScan(indexes: ["i.Sample_t"]))
        var changes = ChangeSet()
        for key in Int64(2_001)...2_040 {
            let values: ContiguousArray<StoredValue> = [.integer(0), .real(-Double(key)), .text("rare"), .null, .null]
            changes.inserts.append(RowWrite(entity: LMDBFixture.sample, key: key, expectedVersion: 0, values: values))
        }
        try engine.commit(changes)
        // 43 rare rows now, still 10 above 1,990: the range's index.
        #expect(
            try lmdb.explain(FetchPlan(entity: LMDBFixture.sample, filter: filter))
                == .indexScan(indexes: ["i.Sample_r"]))
        let all = try LMDBFixture.allRows(engine, LMDBFixture.sample)
        let reader = try engine.makeReader()
        defer { reader.close() }
        let plan = FetchPlan(entity: LMDBFixture.sample, filter: filter)
        #expect(try reader.rows(for: plan) == plan.apply(to: all))
        #expect(plan.apply(to: all).isEmpty, "no rare row is above 1,990")
    }
}
