import Foundation
import StrataStorage
import StrataTestSupport
import Testing

@testable import StrataPostgres

/// A reader inside another's transaction may find none: a commit's result guards are re-read in
/// autocommit after its rollback (`rereadConflicts`), where a cursor cannot be declared. Such a
/// read of more rows than one streamed batch (2,000) comes in one result instead, and the guard
/// check works. (Found by `PhantomRaceTests`, whose processes failed with SQLSTATE 25P01.)
@Suite("PostgresEngine reads in autocommit")
struct PostgresAutocommitReadTests {
    static let rowCount: Int64 = 5_000

    @Test("result guards over 5,000 rows are checked in autocommit: none stale, then the one changed")
    func guardsInAutocommit() async throws {
        let (before, after) = try await PostgresEngineFixture.withEngine(PostgresBatchInsertTests.schema) { engine in
            var changes = ChangeSet()
            changes.inserts = (1...Self.rowCount).map { PostgresBatchInsertTests.entry($0) }
            try engine.commit(changes)
            var guarded = ChangeSet()
            guarded.resultGuards = [
                ResultSetGuard(
                    entity: 0, filter: nil,
                    expected: Dictionary(uniqueKeysWithValues: (1...Self.rowCount).map { ($0, Int64(1)) }))
            ]
            let before = try engine.withSession { (session) throws(StrataError) in
                try engine.checkResultGuards(guarded, session: session)
            }
            var update = ChangeSet()
            update.updates = [
                RowWrite(
                    entity: 0, key: 4_321, expectedVersion: 1,
                    values: PostgresBatchInsertTests.entry(4_321, code: "moved").values)
            ]
            try engine.commit(update)
            let after = try engine.withSession { (session) throws(StrataError) in
                try engine.checkResultGuards(guarded, session: session)
            }
            return (before, after)
        }
        #expect(before.isEmpty)
        #expect(after.map(\.objectID.primaryKey) == [4_321])
        #expect(after.map(\.storedVersion) == [2])
    }
}
