import Foundation
import StrataStorage
import StrataTestSupport
import Testing

@testable import StrataPostgres

/// How many round trips a read takes on PostgreSQL inside a reader's snapshot, and the pipeline
/// that makes it one: a cursor's `DECLARE` and first `FETCH` go together, and a cursor read to
/// its end is closed in the next read's round trip. (The rows of every plan shape, on every
/// engine: `EngineStreamReadTests`.)
@Suite("PostgresEngine read round trips")
struct PostgresReadRoundTripTests {
    /// The failure `body` throws, or nil when it returns.
    static func failure(_ body: () throws(PGFailure) -> Void) -> PGFailure? {
        do throws(PGFailure) {
            try body()
            return nil
        } catch {
            return error
        }
    }

    /// Runs `body` with a connection of a fresh store's engine (on a short lease) and its session.
    static func withConnection<T: Sendable>(
        _ body: @escaping @Sendable (PGConnection, PostgresSession) throws(StrataError) -> T
    ) async throws -> T {
        try await PostgresEngineFixture.withEngine(Fixtures.schema) { engine in
            try engine.withSession { (session) throws(StrataError) in try body(session.connection, session) }
        }
    }

    /// Round trips of `plan`'s second read (the first also prepares its statements), and its rows.
    static func secondRead(_ plan: FetchPlan, _ reader: PostgresReader) throws -> (Int, [StoredRow]) {
        _ = try reader.rows(for: plan)
        let connection = try reader.open().connection
        let before = connection.roundTrips
        let rows = try reader.rows(for: plan)
        return (connection.roundTrips - before, rows)
    }

    @Test("a read of fewer than 2,000 rows takes one round trip; each further batch one more; no CLOSE of its own")
    func roundTrips() async throws {
        let results = try await PostgresEngineFixture.withEngine(Fixtures.schema) { engine in
            let stored = (1...Int64(4_001)).map {
                Fixtures.txn($0, amount: ($0 * 37) % 1_000, account: nil, note: $0 % 7 == 0 ? nil : "n\($0)")
            }
            var changes = ChangeSet()
            changes.inserts = stored
            try engine.commit(changes)
            let reference = stored.map { StoredRow(key: $0.key, version: 1, values: $0.values) }
            guard let reader = try engine.makeReader() as? PostgresReader else {
                throw StrataError.misuse("the PostgreSQL engine made another kind of reader")
            }
            defer { reader.close() }
            let byAmount = [SortKey(column: 0, ascending: false)]
            let small = Filter.compare(column: 0, .lessThan, .integer(250))
            let plans = [
                FetchPlan(entity: Fixtures.txn, filter: small),
                FetchPlan(entity: Fixtures.txn, filter: small, inKeyOrder: false),
                FetchPlan(entity: Fixtures.txn, sort: byAmount, offset: 2_001),
                FetchPlan(entity: Fixtures.txn, sort: byAmount, offset: 2_000),
                FetchPlan(entity: Fixtures.txn, sort: [SortKey(column: 2, ascending: false)], limit: 3_000, offset: 1),
            ]
            return try plans.map { plan in
                let (trips, rows) = try Self.secondRead(plan, reader)
                // An any-order plan's rows may come in any order.
                let got = plan.allowsAnyOrder ? rows.sorted { $0.key < $1.key } : rows
                return (trips, got == plan.apply(to: reference), rows.count)
            }
        }
        #expect(results.map(\.0) == [1, 1, 2, 2, 2], "round trips")
        #expect(results.map(\.1) == [true, true, true, true, true], "rows equal the reference rows")
        #expect(results.map(\.2) == [1_001, 1_001, 2_000, 2_001, 3_000], "row counts")
    }

    @Test("a pipeline's failing statement is named, the rest skipped, and the connection stays usable")
    func pipelineFailure() async throws {
        let outcome = try await Self.withConnection { (connection, session) throws(StrataError) in
            let deadline = ContinuousClock.now + .seconds(30)
            let statements: [PGConnection.PipelinedStatement] = [
                .init(sql: "SELECT $1::int8 + 1", parameters: [.int8(41)]),
                .init(sql: "SELECT 1 / $1::int8", parameters: [.int8(0)]),
                .init(sql: "SELECT 3::int8"),
            ]
            let failure = Self.failure { () throws(PGFailure) in
                _ = try connection.executePipeline(statements, deadline: deadline)
            }
            let fine = try? connection.executePipeline([statements[0], statements[2]], deadline: deadline)
            let after = try? connection.execute("SELECT 7::int8", deadline: deadline)
            return (
                failure?.pipelineIndex, failure?.sqlState, failure?.connectionBroken,
                fine?.map { $0.int64(0, 0) }, after?.int64(0, 0)
            )
        }
        #expect(outcome.0 == 1, "the failing statement's position")
        #expect(outcome.1 == "22012", "division by zero")
        #expect(outcome.2 == false)
        #expect(outcome.3 == [42, 3], "the next pipeline runs")
        #expect(outcome.4 == 7, "a plain statement runs after it")
    }

    @Test("a pipeline whose second statement cannot be sent abandons the connection instead of leaving it stuck")
    func pipelineSendFailure() async throws {
        let outcome = try await Self.withConnection { (connection, session) throws(StrataError) in
            let deadline = ContinuousClock.now + .seconds(30)
            // Fill the connection's prepared statements, so the next statement with
            // parameters is sent unnamed, inside the pipeline, where libpq refuses it.
            var filled = 0
            while filled < PGConnection.preparedLimit {
                if let failure = Self.failure({ () throws(PGFailure) in
                    _ = try connection.execute("SELECT $1::int8 + \(filled)", [.int8(1)], deadline: deadline)
                }) {
                    throw session.error(failure, sql: nil)
                }
                filled += 1
            }
            let tooMany = [PGParameter](repeating: .int8(1), count: 70_000)
            let failure = Self.failure { () throws(PGFailure) in
                _ = try connection.executePipeline(
                    [.init(sql: "SELECT 1::int8"), .init(sql: "SELECT $1::int8", parameters: tooMany)],
                    deadline: deadline)
            }
            let next = Self.failure { () throws(PGFailure) in
                _ = try connection.execute("SELECT 1", deadline: .now + .seconds(5))
            }
            return (failure != nil, failure?.connectionBroken, next?.connectionBroken, next?.message)
        }
        #expect(outcome.0, "the pipeline fails")
        #expect(outcome.1 == true, "the failure says the connection is not used again")
        #expect(outcome.2 == true, "the next statement is refused at once, not sent into a stuck pipeline")
        #expect(outcome.3?.contains("abandoned") == true)
    }

    @Test("a pipeline the server does not answer in time is cancelled at its deadline; the connection is abandoned")
    func pipelineDeadline() async throws {
        let outcome = try await Self.withConnection { (connection, session) throws(StrataError) in
            let start = ContinuousClock.now
            let failure = Self.failure { () throws(PGFailure) in
                _ = try connection.executePipeline(
                    [.init(sql: "SELECT 1::int8"), .init(sql: "SELECT pg_sleep(20)")],
                    deadline: start + .milliseconds(300))
            }
            let waited = start.duration(to: .now)
            let next = Self.failure { () throws(PGFailure) in
                _ = try connection.execute("SELECT 1", deadline: .now + .seconds(5))
            }
            return (failure?.timedOut, failure?.connectionBroken, waited, next?.connectionBroken)
        }
        #expect(outcome.0 == true, "timed out")
        #expect(outcome.1 == true, "the connection is not used again")
        #expect(outcome.2 < .seconds(10), "returned at the deadline, not after the statement")
        #expect(outcome.3 == true, "the next statement is refused on the abandoned connection")
    }
}
