import Foundation
import StrataStorage
import StrataTestSupport
import Testing

@testable import StrataPostgres

/// A commit's updates go in batches (`UPDATE … FROM unnest(…)`), where PostgreSQL checks a
/// unique index row by row in the order the plan picks. A value moving along a chain of rows
/// succeeds row by row in the change set's order (as on the embedded engines), so on a unique
/// clash the engine redoes the entity's updates that way (under a savepoint). These tests force
/// a merge join (hash joins and nested loops off for the session), which updates in key order,
/// the order in which the chain clashes.
@Suite("PostgresEngine batched updates")
struct PostgresBatchUpdateTests {
    static let schema = PostgresBatchInsertTests.schema
    static let mergeJoin = "-c enable_hashjoin=off -c enable_nestloop=off"
    static let rowCount: Int64 = 5

    static func entry(_ key: Int64, code: String, version: Int64) -> RowWrite {
        RowWrite(entity: 0, key: key, expectedVersion: version, values: [.text(code), .null, .null, .null, .null])
    }

    /// Entries 1…5 with codes c1…c5, then `changes` committed; the codes stored afterwards, by key,
    /// and the commit's error.
    static func commitOverSeed(_ changes: ChangeSet) async throws -> ([String], StrataError?) {
        try await PostgresEngineFixture.withEngine(schema, serverSettings: mergeJoin) { engine in
            var seed = ChangeSet()
            seed.inserts = (1...rowCount).map { entry($0, code: "c\($0)", version: 0) }
            try engine.commit(seed)
            var error: StrataError?
            do { try engine.commit(changes) } catch let caught as StrataError { error = caught }
            let rows = try PostgresBatchInsertTests.allRows(engine, entity: 0)
            return (
                rows.map { row in
                    if case .text(let code) = row.values[0] { return code }
                    return "?"
                }, error
            )
        }
    }

    @Test("a chain of codes, each row taking the next one's, last row first: stored as row by row")
    func chainInChangeSetOrder() async throws {
        var changes = ChangeSet()
        // Row 5 gives c5 up first, then row 4 takes it, …: in key order row 1 would clash with row 2.
        changes.updates = (1...Self.rowCount).reversed().map { key in
            Self.entry(key, code: key == Self.rowCount ? "new" : "c\(key + 1)", version: 1)
        }
        let (codes, error) = try await Self.commitOverSeed(changes)
        #expect(error == nil)
        #expect(codes == ["c2", "c3", "c4", "c5", "new"])
    }

    @Test("the chain, then inserts and the history in the same commit: rows redone one by one, the rest still runs")
    func chainThenMoreWrites() async throws {
        let (codes, tags, tokens) = try await PostgresEngineFixture.withEngine(
            Self.schema, serverSettings: Self.mergeJoin
        ) {
            engine in
            var seed = ChangeSet()
            seed.inserts = (1...Self.rowCount).map { Self.entry($0, code: "c\($0)", version: 0) }
            try engine.commit(seed)
            var changes = ChangeSet()
            changes.updates = (1...Self.rowCount).reversed().map { key in
                Self.entry(key, code: key == Self.rowCount ? "new" : "c\(key + 1)", version: 1)
            }
            changes.inserts = [
                Self.entry(9, code: "c9", version: 0),
                RowWrite(entity: 1, key: 1, expectedVersion: 0, values: [.text("t")]),
            ]
            changes.history = HistoryRecord(
                author: nil, changes: [HistoryChange(entity: "Tag", key: 1, kind: .insert, changedProperties: ["name"])]
            )
            try engine.commit(changes)
            let rows = try PostgresBatchInsertTests.allRows(engine, entity: 0)
            return (
                rows.map { $0.values[0] }, try PostgresBatchInsertTests.allRows(engine, entity: 1).map(\.values),
                try engine.history(after: 0, limit: nil).map(\.token)
            )
        }
        #expect(codes == ["c2", "c3", "c4", "c5", "new", "c9"].map(StoredValue.text))
        #expect(tags == [[.text("t")]])
        #expect(tokens == [1])
    }

    /// Deleting `tagCount` tags first puts the update group's statements where a pipeline of
    /// eight ends: with 10,001 tags (six delete batches) the group's `SAVEPOINT` and clashing
    /// `UPDATE` end the first pipeline, and after the fallback the next starts at the insert; with
    /// 12,001 (seven) the `SAVEPOINT` ends the first pipeline and the clashing `UPDATE` begins the
    /// next, so the clash is found in a later pipeline than its savepoint.
    @Test(
        "an update group across two pipelines: the clash falls back to single rows; the writes before and after hold",
        arguments: [10_001, 12_001])
    func chainAcrossPipelines(tagCount: Int) async throws {
        let commit: @Sendable (PostgresEngine) throws -> ([StoredValue], [ContiguousArray<StoredValue>], [Int64]) = {
            engine in
            var seed = ChangeSet()
            seed.inserts = (1...Self.rowCount).map { Self.entry($0, code: "c\($0)", version: 0) }
            seed.inserts += (1...Int64(tagCount)).map {
                RowWrite(entity: 1, key: $0, expectedVersion: 0, values: [.text("t\($0)")])
            }
            try engine.commit(seed)
            var changes = ChangeSet()
            changes.deletes = (1...Int64(tagCount)).map { RowVersionCheck(entity: 1, key: $0, expectedVersion: 1) }
            changes.updates = (1...Self.rowCount).reversed().map { key in
                Self.entry(key, code: key == Self.rowCount ? "new" : "c\(key + 1)", version: 1)
            }
            changes.inserts = [RowWrite(entity: 1, key: 100_000, expectedVersion: 0, values: [.text("kept")])]
            changes.history = HistoryRecord(
                author: nil, changes: [HistoryChange(entity: "Tag", key: 1, kind: .delete, changedProperties: [])])
            try engine.commit(changes)
            return (
                try PostgresBatchInsertTests.allRows(engine, entity: 0).map { $0.values[0] },
                try PostgresBatchInsertTests.allRows(engine, entity: 1).map(\.values),
                try engine.history(after: 0, limit: nil).map(\.token)
            )
        }
        let (codes, tags, tokens) = try await PostgresEngineFixture.withEngine(
            Self.schema, serverSettings: Self.mergeJoin, commit)
        #expect(codes == ["c2", "c3", "c4", "c5", "new"].map(StoredValue.text))
        #expect(tags == [[.text("kept")]])
        #expect(tokens == [1])
    }

    @Test("a chain in the clashing order, and a code taken by a row not updated: .constraintViolation, nothing written")
    func realClashes() async throws {
        var chain = ChangeSet()
        chain.updates = (1...Self.rowCount).map { key in
            Self.entry(key, code: key == Self.rowCount ? "new" : "c\(key + 1)", version: 1)
        }
        var taken = ChangeSet()
        taken.updates = [Self.entry(1, code: "x", version: 1), Self.entry(2, code: "c5", version: 1)]
        for changes in [chain, taken] {
            let (codes, error) = try await Self.commitOverSeed(changes)
            guard case .constraintViolation(let entity, let attributes, let native)? = error else {
                Issue.record("expected .constraintViolation, got \(String(describing: error))")
                continue
            }
            #expect(entity == "Entry")
            #expect(attributes == ["code"])
            #expect(native?.sqlState == "23505")
            #expect(codes == ["c1", "c2", "c3", "c4", "c5"])
        }
    }
}
