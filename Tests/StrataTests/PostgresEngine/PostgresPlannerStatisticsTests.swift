import Foundation
import StrataStorage
import StrataTestSupport
import Testing

@testable import StrataPostgres

/// The engine analyses a table its commits have grown (`PostgresEngine+PlannerStatistics.swift`),
/// so prepared statements are not left with plans made for a nearly empty table.
@Suite("PostgresEngine planner statistics")
struct PostgresPlannerStatisticsTests {
    /// The accounts `keys`, inserted in one commit.
    static func accounts(_ keys: ClosedRange<Int64>) -> ChangeSet {
        var changes = ChangeSet()
        changes.inserts = keys.map { Fixtures.account($0, "a\($0)") }
        return changes
    }

    /// The rows the server counted in the accounts' table at its last analysis; 0 for none (-1 on
    /// PostgreSQL 14 and later, 0 before).
    static func rowsCounted(_ engine: PostgresEngine) throws -> Int64 {
        let table = engine.tables[Fixtures.account].table
        let rows = try engine.withSession { (session) throws(StrataError) in
            try session.int64("SELECT reltuples::int8 FROM pg_class WHERE oid = to_regclass($1)", [.rawText(table)])
        }
        return max(rows ?? 0, 0)
    }

    /// Turns autovacuum off for the accounts' table, so only the engine's analyses count.
    static func withoutAutovacuum(_ engine: PostgresEngine) throws {
        let table = engine.tables[Fixtures.account].table
        try engine.withSession { (session) throws(StrataError) in
            _ = try session.run("ALTER TABLE \(table) SET (autovacuum_enabled = false)")
        }
    }

    @Test("a table is analysed once commits have inserted 1,000 rows into it, then at each doubling")
    func analysedAsItGrows() async throws {
        let counts = try await PostgresEngineFixture.withEngine(Fixtures.schema) { engine in
            try Self.withoutAutovacuum(engine)
            var counts = [try Self.rowsCounted(engine)]
            for keys: ClosedRange<Int64> in [
                1...999, 1_000...1_000, 1_001...1_999, 2_000...2_000, 2_001...3_999, 4_000...4_000,
            ] {
                try engine.commit(Self.accounts(keys))
                counts.append(try Self.rowsCounted(engine))
            }
            return counts
        }
        #expect(counts == [0, 0, 1_000, 1_000, 2_000, 2_000, 4_000])
    }

    @Test("an engine opened on a large analysed table waits until it has doubled, not for 1,000 rows")
    func secondEngineOnAnalysedTable() async throws {
        let counts = try await PostgresEngineFixture.withEngine(Fixtures.schema) { engine in
            try Self.withoutAutovacuum(engine)
            try engine.commit(Self.accounts(1...4_000))
            let url = try #require(TestPostgres.url)
            let other = try PostgresEngine.open(
                url: url, schema: engine.pool.settings.schema, storeSchema: Fixtures.schema,
                options: PostgresOptions())
            defer { other.close() }
            var counts = [try Self.rowsCounted(engine)]
            try other.commit(Self.accounts(4_001...5_000))
            counts.append(try Self.rowsCounted(engine))
            try other.commit(Self.accounts(5_001...8_000))
            counts.append(try Self.rowsCounted(engine))
            return counts
        }
        #expect(counts == [4_000, 4_000, 8_000])
    }

    @Test("a commit whose table cannot be analysed at once still returns at once, and the analysis is tried again")
    func analysisBlocked() async throws {
        let (elapsed, counts) = try await PostgresEngineFixture.withEngine(Fixtures.schema) { engine in
            try Self.withoutAutovacuum(engine)
            try engine.commit(Self.accounts(1...1_000))
            try engine.commit(Self.accounts(1_001...2_000))
            // Another session holds a lock that ANALYZE waits for (SHARE UPDATE EXCLUSIVE conflicts
            // with itself) while the commit that doubles the table runs.
            let table = engine.tables[Fixtures.account].table
            let blocker = try PGConnection(keywords: engine.pool.settings.keywords)
            _ = try blocker.executeScript(
                "BEGIN; LOCK TABLE \(table) IN SHARE UPDATE EXCLUSIVE MODE", deadline: .now + .seconds(10))
            let started = ContinuousClock.now
            try engine.commit(Self.accounts(2_001...4_000))
            let elapsed = ContinuousClock.now - started
            var counts = [try Self.rowsCounted(engine)]
            _ = try blocker.executeScript("COMMIT", deadline: .now + .seconds(10))
            // Tried again 1,000 rows after the failure, not at the next doubling (8,000 rows).
            try engine.commit(Self.accounts(4_001...4_999))
            counts.append(try Self.rowsCounted(engine))
            try engine.commit(Self.accounts(5_000...5_000))
            counts.append(try Self.rowsCounted(engine))
            return (elapsed, counts)
        }
        // The analysis waits 50 ms for the lock, not the session's lockTimeout (5 s by default).
        #expect(elapsed < .seconds(3), "the commit was held \(elapsed) by the blocked analysis")
        #expect(counts == [2_000, 2_000, 5_000], "not analysed while locked; tried again 1,000 rows later")
    }
}
