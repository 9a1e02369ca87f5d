import Foundation
import StrataStorage
import StrataTestSupport
import Synchronization
import Testing

@testable import StrataPostgres

/// How many round trips a commit takes on PostgreSQL: its `BEGIN`, the store's open lock and the
/// schema-version check go in one (`beginCheckingSchemaVersion`), and a store migrated by another
/// engine is still refused with nothing written.
@Suite("PostgresEngine commit round trips")
struct PostgresCommitRoundTripTests {
    /// The round trips of `commit`, counted on the pool's one idle connection (the one a commit
    /// checks out, and checks in again).
    static func roundTrips(_ engine: PostgresEngine, _ commit: () throws -> Void) throws -> Int {
        let connection = try engine.pool.checkOut(.short)
        engine.pool.checkIn(connection, .short)
        let before = connection.roundTrips
        try commit()
        let after = try engine.pool.checkOut(.short)
        engine.pool.checkIn(after, .short)
        guard after === connection else { throw StrataError.misuse("the commit used another connection") }
        return connection.roundTrips - before
    }

    @Test("an update of one row takes four round trips: begin and schema check, lock, update, commit")
    func updateRoundTrips() async throws {
        let (trips, stored) = try await PostgresEngineFixture.withEngine(Fixtures.schema) { engine in
            var insert = ChangeSet()
            insert.inserts = [Fixtures.account(1, "a")]
            try engine.commit(insert)
            var update = ChangeSet()
            update.updates = [Fixtures.account(1, "b", balance: 5, version: 1)]
            try engine.commit(update) // prepares the statements
            update.updates = [Fixtures.account(1, "c", balance: 7, version: 2)]
            let trips = try Self.roundTrips(engine) { try engine.commit(update) }
            let reader = try engine.makeReader()
            defer { reader.close() }
            return (trips, try reader.row(entity: Fixtures.account, key: 1))
        }
        #expect(trips == 4)
        #expect(stored?.values == [.text("c"), .integer(7), .null, .integer(1)])
        #expect(stored?.version == 3)
    }

    @Test("an insert of rows takes three round trips: begin and schema check, the insert, commit (no key look-up)")
    func insertRoundTrips() async throws {
        let (trips, stored) = try await PostgresEngineFixture.withEngine(Fixtures.schema) { engine in
            var insert = ChangeSet()
            insert.inserts = [Fixtures.account(1, "a")]
            try engine.commit(insert) // prepares the statements
            insert.inserts = [Fixtures.account(2, "b"), Fixtures.account(3, "c")]
            let trips = try Self.roundTrips(engine) { try engine.commit(insert) }
            let reader = try engine.makeReader()
            defer { reader.close() }
            return (trips, try reader.rows(for: FetchPlan(entity: Fixtures.account)).map(\.key))
        }
        #expect(trips == 3)
        #expect(stored == [1, 2, 3])
    }

    /// An insert of account `key` described by a history record.
    static func insertWithHistory(_ key: Int64) -> ChangeSet {
        var changes = ChangeSet()
        changes.inserts = [Fixtures.account(key, "h\(key)")]
        changes.history = HistoryRecord(
            author: "test",
            changes: [HistoryChange(entity: "Account", key: key, kind: .insert, changedProperties: ["name"])])
        return changes
    }

    @Test(
        "an insert with history takes three round trips: begin and schema check, the insert, history with commit"
    )
    func historyRoundTrips() async throws {
        let (trips, tokens) = try await PostgresEngineFixture.withEngine(Fixtures.schema) { engine in
            try engine.commit(Self.insertWithHistory(1)) // prepares the statements
            let trips = try Self.roundTrips(engine) { try engine.commit(Self.insertWithHistory(2)) }
            return (trips, try engine.history(after: 0, limit: nil).map(\.token))
        }
        #expect(trips == 3)
        #expect(tokens == [1, 2])
    }

    @Test("a transfer (two updates under a unique index, two inserts, history) takes four round trips")
    func transferRoundTrips() async throws {
        let (trips, balances, txns) = try await PostgresEngineFixture.withEngine(Fixtures.schema) { engine in
            var seed = Self.insertWithHistory(1)
            seed.inserts.append(Fixtures.account(2, "h2"))
            try engine.commit(seed)
            func transfer(_ version: Int64, first: Int64) -> ChangeSet {
                var changes = ChangeSet()
                changes.updates = [
                    Fixtures.account(1, "h1", balance: -version, version: version),
                    Fixtures.account(2, "h2", balance: version, version: version),
                ]
                changes.inserts = [
                    Fixtures.txn(first, amount: -1, account: 1), Fixtures.txn(first + 1, amount: 1, account: 2),
                ]
                changes.history = HistoryRecord(
                    author: nil,
                    changes: [HistoryChange(entity: "Account", key: 1, kind: .update, changedProperties: ["balance"])])
                return changes
            }
            try engine.commit(transfer(1, first: 1)) // prepares the statements
            let trips = try Self.roundTrips(engine) { try engine.commit(transfer(2, first: 3)) }
            let reader = try engine.makeReader()
            defer { reader.close() }
            return (
                trips, try reader.rows(for: FetchPlan(entity: Fixtures.account)).map { $0.values[1] },
                try reader.rows(for: FetchPlan(entity: Fixtures.txn)).count
            )
        }
        #expect(trips == 4)
        #expect(balances == [.integer(-2), .integer(2)])
        #expect(txns == 4)
    }

    @Test("a history clock that is spent, or whose row is gone, refuses the commit with .storeFull; nothing is written")
    func spentHistoryClock() async throws {
        let (spent, missing, rows, tokens) = try await PostgresEngineFixture.withEngine(Fixtures.schema) { engine in
            try engine.commit(Self.insertWithHistory(1))
            func clock(_ sql: String) throws {
                try engine.withSession { (session) throws(StrataError) in _ = try session.run(sql) }
            }
            func refusal(_ key: Int64) -> StrataError? {
                do {
                    try engine.commit(Self.insertWithHistory(key))
                    return nil
                } catch {
                    return error as? StrataError
                }
            }
            try clock("UPDATE \(engine.names.historyClock) SET last_token = \(Int64.max) WHERE id = 1")
            let spent = refusal(2)
            try clock("DELETE FROM \(engine.names.historyClock)")
            let missing = refusal(3)
            try clock("INSERT INTO \(engine.names.historyClock) (id, last_token) VALUES (1, 1)")
            let reader = try engine.makeReader()
            defer { reader.close() }
            return (
                spent, missing, try reader.rows(for: FetchPlan(entity: Fixtures.account)).map(\.key),
                try engine.history(after: 0, limit: nil).map(\.token)
            )
        }
        guard case .storeFull(let message, _)? = spent, message.contains("every token") else {
            Issue.record("a spent clock: expected .storeFull, got \(String(describing: spent))")
            return
        }
        guard case .storeFull? = missing else {
            Issue.record("a missing clock row: expected .storeFull, got \(String(describing: missing))")
            return
        }
        #expect(rows == [1], "nothing of the refused commits written")
        #expect(tokens == [1])
    }

    @Test("a history clock locked past lockTimeout refuses the commit with .busy; nothing written; the next commits")
    func lockedHistoryClock() async throws {
        let options = PostgresOptions(lockTimeout: .milliseconds(300))
        let (refusal, rows, tokens) = try await PostgresEngineFixture.withEngine(Fixtures.schema, options: options) {
            engine in
            try engine.commit(Self.insertWithHistory(1)) // prepares the statements
            // Another session holds the clock's row lock, as a commit with history does while
            // the server runs its last statements.
            let holder = try PGConnection(keywords: engine.pool.settings.keywords)
            _ = try holder.executeScript(
                "BEGIN; SELECT last_token FROM \(engine.names.historyClock) WHERE id = 1 FOR UPDATE",
                deadline: .now + .seconds(10))
            var refusal: StrataError?
            do { try engine.commit(Self.insertWithHistory(2)) } catch let error as StrataError { refusal = error }
            _ = try holder.executeScript("ROLLBACK", deadline: .now + .seconds(10))
            try engine.commit(Self.insertWithHistory(3))
            let reader = try engine.makeReader()
            defer { reader.close() }
            return (
                refusal, try reader.rows(for: FetchPlan(entity: Fixtures.account)).map(\.key),
                try engine.history(after: 0, limit: nil).map(\.token)
            )
        }
        guard case .busy(let message, let native)? = refusal else {
            Issue.record("expected .busy, got \(String(describing: refusal))")
            return
        }
        #expect(native?.sqlState == "55P03", "the server's lock timeout: \(message)")
        #expect(rows == [1, 3], "nothing of the refused commit written")
        #expect(tokens == [1, 2])
    }

    @Test("a batch that would take a round trip past 4 MiB of parameters goes in the next one")
    func byteBudgetRoundTrips() async throws {
        // Two insert batches: 2,000 rows with short memos, then 2,000 with 3,000-byte memos
        // (about 6 MB): one round trip each, where eight small batches share one.
        let (trips, count) = try await PostgresEngineFixture.withEngine(Fixtures.schema) { engine in
            func accounts(_ keys: ClosedRange<Int64>) -> ChangeSet {
                var changes = ChangeSet()
                changes.inserts = keys.map { key in
                    let memo = key % 4_000 <= 2_000 && key % 4_000 != 0 ? "m" : String(repeating: "x", count: 3_000)
                    return Fixtures.account(key, "a\(key)", memo: memo)
                }
                return changes
            }
            try engine.commit(accounts(1...4_000)) // prepares the statements
            // The table doubles in the counted commit: its analysis (PostgresPlannerStatisticsTests)
            // is put off, so only the commit's own round trips are counted.
            let table = engine.tables[Fixtures.account].table
            engine.tableGrowth.withLock { $0[table, default: .init()].rowsAtAnalysis = 1_000_000 }
            let trips = try Self.roundTrips(engine) { try engine.commit(accounts(4_001...8_000)) }
            let reader = try engine.makeReader()
            defer { reader.close() }
            return (trips, try reader.rows(for: FetchPlan(entity: Fixtures.account)).count)
        }
        #expect(trips == 4)
        #expect(count == 8_000)
    }

    @Test("a key reservation takes three round trips: begin and schema check, the counter's update, commit")
    func keyReservationRoundTrips() async throws {
        let (trips, first, second) = try await PostgresEngineFixture.withEngine(Fixtures.schema) { engine in
            // Each takes a whole block (more keys than one block of 256), so each reserves anew.
            let first = try engine.allocateKeys(entity: Fixtures.account, count: 300)
            var second: Range<Int64> = 0..<0
            let trips = try Self.roundTrips(engine) {
                second = try engine.allocateKeys(entity: Fixtures.account, count: 300)
            }
            return (trips, first, second)
        }
        #expect(trips == 3)
        #expect(first.count == 300 && second.count == 300 && first.upperBound <= second.lowerBound)
    }

    @Test("a commit to a store whose schema version moved is refused and writes nothing; restored, it goes through")
    func movedSchemaVersion() async throws {
        let (refusal, stored, afterRestore) = try await PostgresEngineFixture.withEngine(Fixtures.schema) { engine in
            var insert = ChangeSet()
            insert.inserts = [Fixtures.account(1, "a")]
            try engine.commit(insert)
            func setVersion(_ version: String) throws {
                try engine.withSession { (session) throws(StrataError) in
                    _ = try session.run(
                        "UPDATE \(engine.names.metadata) SET value = $1 WHERE key = 'schema_version'", [.text(version)])
                }
            }
            try setVersion("99")
            var update = ChangeSet()
            update.updates = [Fixtures.account(1, "b", balance: 5, version: 1)]
            var refusal: StrataError?
            do { try engine.commit(update) } catch let error as StrataError { refusal = error }
            try setVersion("1")
            let reader = try engine.makeReader()
            let stored = try reader.row(entity: Fixtures.account, key: 1)
            reader.close()
            try engine.commit(update)
            let again = try engine.makeReader()
            defer { again.close() }
            return (refusal, stored, try again.row(entity: Fixtures.account, key: 1))
        }
        #expect(refusal == .storeNewerThanModel(storeVersion: 99, modelVersion: 1))
        #expect(stored?.values.first == .text("a"), "nothing written")
        #expect(afterRestore?.values.first == .text("b"), "the same change commits once the version is back")
    }
}
