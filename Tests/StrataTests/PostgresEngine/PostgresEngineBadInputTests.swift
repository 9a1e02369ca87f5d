import Foundation
import StrataStorage
import StrataTestSupport
import Testing

@testable import StrataPostgres

/// Bad input at open (design notes §15.4): each is a typed error, within the connect timeout,
/// whose description never holds the password.
@Suite("PostgresEngine bad input")
struct PostgresEngineBadInputTests {
    static let password = "Sup3r-S3cret-pw"

    /// Opens `url`/`schema` off the cooperative pool and returns the error, nil when it opened.
    static func openError(
        url: String, schema: String = "b_" + String(UUID().uuidString.prefix(8)).lowercased(),
        options: PostgresOptions = PostgresOptions(connectTimeout: .seconds(2))
    ) async -> StrataError? {
        await timedOpenError(url: url, schema: schema, options: options).error
    }

    /// The error of opening, and how long the open itself took (not counting the wait for a thread).
    static func timedOpenError(
        url: String, schema: String = "b_" + String(UUID().uuidString.prefix(8)).lowercased(),
        options: PostgresOptions = PostgresOptions(connectTimeout: .seconds(2))
    ) async -> (error: StrataError?, took: Duration) {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                let start = ContinuousClock.now
                do {
                    let engine = try PostgresEngine.open(
                        url: url, schema: schema, storeSchema: PostgresPoolTests.schema, options: options)
                    engine.close()
                    continuation.resume(returning: (nil, ContinuousClock.now - start))
                } catch let error as StrataError {
                    continuation.resume(returning: (error, ContinuousClock.now - start))
                } catch {
                    continuation.resume(
                        returning: (.misuse("not a StrataError: \(error)"), ContinuousClock.now - start))
                }
            }
        }
    }

    /// The test server's URL with `dbname` replaced.
    static func url(database: String) throws -> String {
        let server = try #require(TestPostgres.url)
        let keywords = try #require(PGConnectionInfo.parse(server))
        return keywords.map { "\($0.keyword)='\($0.keyword == "dbname" ? database : $0.value)'" }.joined(separator: " ")
    }

    @Test("a missing database is .notAStore")
    func missingDatabase() async throws {
        let error = await Self.openError(url: try Self.url(database: "no_such_database"))
        guard case .notAStore? = error else {
            Issue.record("expected .notAStore, got \(String(describing: error))")
            return
        }
    }

    @Test("a missing schema with .requireExistingSchema is .notAStore; a schema of other tables too")
    func missingOrForeignSchema() async throws {
        let server = try #require(TestPostgres.url)
        let refused = await Self.openError(
            url: server, options: PostgresOptions(creation: .requireExistingSchema))
        guard case .notAStore? = refused else {
            Issue.record("expected .notAStore, got \(String(describing: refused))")
            return
        }
        // A schema someone else made: one table that is not Strata's.
        let foreign = "f_" + String(UUID().uuidString.prefix(8)).lowercased()
        let engine = try PostgresEngine.open(
            url: server, schema: "h_" + String(UUID().uuidString.prefix(8)).lowercased(),
            storeSchema: PostgresPoolTests.schema, options: PostgresOptions())
        try engine.withTransaction { (session) throws(StrataError) in
            try session.run("CREATE SCHEMA \(pgQuoted(foreign))")
            try session.run("CREATE TABLE \(pgQuoted(foreign)).books (id int)")
        }
        engine.close()
        let error = await Self.openError(url: server, schema: foreign)
        guard case .notAStore(_, let reason, _)? = error else {
            Issue.record("expected .notAStore, got \(String(describing: error))")
            return
        }
        #expect(reason.contains("not a Strata store"))
    }

    @Test("a malformed URL is .misuse and does not echo the password")
    func malformedURL() async {
        let error = await Self.openError(url: "postgresql:/app:\(Self.password)@127.0.0.1:1/db")
        guard case .misuse(let detail, _)? = error else {
            Issue.record("expected .misuse, got \(String(describing: error))")
            return
        }
        #expect(!detail.contains(Self.password))
    }

    @Test("a port nobody listens on is .io, fast, without the password")
    func unreachable() async {
        let (error, took) = await Self.timedOpenError(url: "postgresql://app:\(Self.password)@127.0.0.1:1/db")
        guard case .io? = error else {
            Issue.record("expected .io, got \(String(describing: error))")
            return
        }
        #expect(took < .seconds(3))
        #expect(!"\(error!)".contains(Self.password))
    }

    @Test("a wrong password is .io naming the login, never the password")
    func wrongPassword() async throws {
        let server = try #require(TestPostgres.url)
        let keywords = try #require(PGConnectionInfo.parse(server))
        let port = try #require(keywords.first { $0.keyword == "port" }?.value)
        let role = "pw_" + String(UUID().uuidString.prefix(8)).lowercased()
        let engine = try PostgresEngine.open(
            url: server, schema: "h_" + String(UUID().uuidString.prefix(8)).lowercased(),
            storeSchema: PostgresPoolTests.schema, options: PostgresOptions())
        try engine.withTransaction { (session) throws(StrataError) in
            // DDL takes no parameters; the names are generated above, not user input.
            try session.run("CREATE ROLE \(pgQuoted(role)) LOGIN PASSWORD 'right-one'")
        }
        engine.close()
        let error = await Self.openError(url: "postgresql://\(role):\(Self.password)@127.0.0.1:\(port)/strata")
        guard case .io(let detail, _)? = error else {
            Issue.record("expected .io, got \(String(describing: error))")
            return
        }
        #expect(detail.contains("login"))
        #expect(!"\(error!)".contains(Self.password))
    }
}
