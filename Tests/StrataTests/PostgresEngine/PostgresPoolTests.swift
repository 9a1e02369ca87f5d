import Foundation
import PostgresTestStores
import StrataStorage
import StrataTestSupport
import Testing

@testable import StrataPostgres

/// The pool and the driver's timeouts against the test server (`Scripts/with-postgres.sh`).
/// Each test blocks on the server, so it runs on a dispatch queue, not a cooperative thread.
@Suite("PostgresEngine pool and timeouts")
struct PostgresPoolTests {
    static let schema = StoreSchema(
        version: 1,
        entities: [
            EntitySchema(
                name: "Item", number: 0, columns: [ColumnSchema(name: "name", type: .string, isOptional: false)],
                indexes: [])
        ], joins: [])

    /// Opens a fresh store with `options`, runs `body` off the cooperative pool, closes it.
    static func withEngine<T: Sendable>(
        _ options: PostgresOptions, _ body: @escaping @Sendable (PostgresEngine) throws -> T
    ) async throws -> T {
        try await PostgresEngineFixture.withEngine(schema, options: options, body)
    }

    @Test("a connection the server dropped is replaced: one call fails with .busy, the next works")
    func brokenConnectionReplaced() async throws {
        let pids = try await Self.withEngine(PostgresOptions(poolSize: 2)) { engine in
            // Two leases: the second terminates the first's backend; the first goes back last,
            // so it is the next one handed out.
            let doomed = try engine.pool.checkOut(.short)
            let first = doomed.backendPID
            try engine.withTransaction { (session) throws(StrataError) in
                _ = try session.run("SELECT pg_terminate_backend($1::int4)", [.int8(Int64(first))])
            }
            engine.pool.checkIn(doomed, .short)
            Thread.sleep(forTimeInterval: 0.1)
            var failures = 0
            var token: Int64?
            for _ in 0..<3 where token == nil {
                do {
                    token = try engine.currentHistoryToken()
                } catch StrataError.busy {
                    failures += 1
                }
            }
            let second = try engine.withSession { $0.connection.backendPID }
            return (first, second, failures, token)
        }
        #expect(pids.3 == 0)
        #expect(pids.2 == 1) // the call that met the dead connection, which was then dropped
        #expect(pids.0 != pids.1)
    }

    @Test("a checkout that waits past checkoutTimeout is .busy and names poolSize")
    func checkoutTimeout() async throws {
        let outcome = try await Self.withEngine(PostgresOptions(poolSize: 2, checkoutTimeout: .milliseconds(200))) {
            engine in
            let reader = try engine.makeReader() // readers may take poolSize - 1 connections
            defer { reader.close() }
            let start = ContinuousClock.now
            do {
                _ = try engine.makeReader()
                return ("no error", Duration.zero)
            } catch {
                return ("\(error)", ContinuousClock.now - start)
            }
        }
        #expect(outcome.0.contains("poolSize"))
        #expect(outcome.0.contains("busy"))
        // It was the readers' share that ran out (one connection stays free for commits).
        #expect(outcome.0.contains("all 1 connections readers may hold"), "\(outcome.0)")
        #expect(outcome.1 >= .milliseconds(150) && outcome.1 < .seconds(3))
    }

    @Test("a reader holding its connection still leaves one for keys and commits")
    func nestedLease() async throws {
        let keys = try await Self.withEngine(PostgresOptions(poolSize: 2, checkoutTimeout: .milliseconds(500))) {
            engine in
            let reader = try engine.makeReader()
            defer { reader.close() }
            return try engine.allocateKeys(entity: 0, count: 3)
        }
        #expect(keys.count == 3)
    }

    @Test("a statement running past statementTimeout is cancelled by the server: .busy with SQLSTATE 57014")
    func statementTimeout() async throws {
        let error = try await Self.withEngine(PostgresOptions(statementTimeout: .milliseconds(300))) { engine in
            do {
                try engine.withSession { (session) throws(StrataError) in _ = try session.run("SELECT pg_sleep(3)") }
                return StrataError?.none
            } catch let error as StrataError {
                return error
            }
        }
        guard let error, case .busy(let detail, let native) = error else {
            Issue.record("expected .busy, got \(String(describing: error))")
            return
        }
        #expect(native?.sqlState == "57014")
        #expect(detail.contains("statementTimeout"))
    }

    @Test("a commit waiting past lockTimeout for a row lock is .busy (55P03) and writes nothing")
    func lockTimeout() async throws {
        let outcome = try await Self.withEngine(PostgresOptions(lockTimeout: .milliseconds(200))) { engine in
            var insert = ChangeSet()
            insert.inserts = [RowWrite(entity: 0, key: 1, expectedVersion: 0, values: [.text("first")])]
            try engine.commit(insert)
            // Another transaction holds the row's lock.
            let holder = try engine.pool.checkOut(.short)
            let session = PostgresSession(connection: holder, pool: engine.pool)
            try session.run("BEGIN")
            try session.run("SELECT \"id\" FROM \(engine.tables[0].table) WHERE \"id\" = $1 FOR UPDATE", [.int8(1)])
            var update = ChangeSet()
            update.updates = [RowWrite(entity: 0, key: 1, expectedVersion: 1, values: [.text("second")])]
            var error: StrataError?
            do { try engine.commit(update) } catch let caught as StrataError { error = caught }
            session.rollbackQuietly()
            engine.pool.checkIn(holder, .short)
            let reader = try engine.makeReader()
            defer { reader.close() }
            let stored = try reader.row(entity: 0, key: 1)
            try engine.commit(update) // the lock is gone: the same change commits
            return (error, stored)
        }
        guard let error = outcome.0, case .busy(_, let native) = error else {
            Issue.record("expected .busy, got \(String(describing: outcome.0))")
            return
        }
        #expect(native?.sqlState == "55P03")
        #expect(outcome.1?.version == 1)
        #expect(outcome.1?.values == [.text("first")])
    }

    @Test("metadata overwritten with garbage or emptied is .notAStore, and the open changes nothing")
    func damagedMetadata() async throws {
        guard let url = TestPostgres.url else { throw StrataError.misuse("\(TestPostgres.variable) is not set") }
        let location = URL(fileURLWithPath: "/tmp/strata-h1-\(UUID().uuidString)/store.postgres")
        let configuration = TestPostgres.configuration(at: location)
        let contents = try #require(configuration.storeContents)
        let results: [String] = try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(
                    with: Result {
                        try configuration.open(Self.schema).close()
                        var outcomes: [String] = []
                        for damage in [Data("garbage \u{1} ♥".utf8), Data()] {
                            let parts = try contents.read()
                            try contents.write(parts.map { _ in damage })
                            let written = try contents.read()
                            do {
                                try configuration.open(Self.schema).close()
                                outcomes.append("opened")
                            } catch let error as StrataError {
                                if case .notAStore = error {
                                    outcomes.append("notAStore")
                                } else {
                                    outcomes.append("\(error)")
                                }
                            }
                            outcomes.append(try contents.read() == written ? "unchanged" : "changed")
                            try contents.write(parts)
                        }
                        _ = url
                        return outcomes
                    })
            }
        }
        #expect(results == ["notAStore", "unchanged", "notAStore", "unchanged"])
    }
}
