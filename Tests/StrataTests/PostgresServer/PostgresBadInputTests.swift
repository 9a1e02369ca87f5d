import Foundation
import Strata
import StrataPostgres
import StrataTestSupport
import Testing

/// Bad connection input for a PostgreSQL store: each case gives a typed `StrataError` with a
/// message that says what happened, never a hang past the connect timeout, and never the
/// password. Everything stays on loopback or the test server's Unix socket.
@Suite("PostgreSQL: bad input")
struct PostgresBadInputTests {
    /// The connect timeout of these tests (libpq's smallest is 2 s).
    static let connectTimeout = Duration.seconds(2)
    /// How long any bad input may take to fail: the connect timeout and a margin for a busy machine.
    static let limit = connectTimeout + .seconds(3)

    /// The test server's port (from `STRATA_POSTGRES_URL`), also open on 127.0.0.1 with scram-sha-256.
    static func serverPort() throws -> Int {
        let url = try #require(TestPostgres.url, "\(TestPostgres.variable) is not set: run with Scripts/test.sh")
        let port = URLComponents(string: url)?.queryItems?.first { $0.name == "port" }?.value.flatMap { Int($0) }
        return try #require(port, "\(TestPostgres.variable) has no port= parameter: \(url)")
    }

    /// Opens a ledger-free fixture store with `url` and `schema`; returns the error and how long
    /// the open took.
    static func open(
        url: String, schema: String = "s_bad_input",
        options: PostgresOptions = PostgresOptions(connectTimeout: connectTimeout)
    ) async -> (error: StrataError?, other: (any Error)?, took: Duration) {
        // On a thread of its own: a connect may wait up to the connect timeout. The time is the
        // open's own, not the wait for a thread on a busy machine.
        let (outcome, took) = await runOnOwnThread { () -> Result<Void, any Error> in
            Result {
                try PersistentContainer(
                    schema: TestModels.schema, engine: .postgres(url: url, schema: schema, options: options)
                ).close()
            }
        }
        switch outcome {
        case .success: return (nil, nil, took)
        case .failure(let error as StrataError): return (error, nil, took)
        case .failure(let error): return (nil, error, took)
        }
    }

    /// The checks every case shares: a typed error of the expected case, within the limit, whose
    /// message (and native cause) never holds `secret`.
    static func expectTyped(
        _ outcome: (error: StrataError?, other: (any Error)?, took: Duration), _ what: String, secret: String? = nil,
        sourceLocation: SourceLocation = #_sourceLocation, _ isExpected: (StrataError) -> Bool
    ) {
        guard let error = outcome.error else {
            let got = outcome.other.map { String(reflecting: $0) } ?? "a store that opened"
            Issue.record(
                "\(what): expected a StrataError, got \(got)",
                sourceLocation: sourceLocation)
            return
        }
        print("PostgreSQL bad input, \(what): \(outcome.took): \(error)")
        #expect(isExpected(error), "\(what): unexpected \(String(reflecting: error))", sourceLocation: sourceLocation)
        #expect(outcome.took < limit, "\(what): took \(outcome.took), past \(limit)", sourceLocation: sourceLocation)
        if let secret {
            #expect(
                !error.description.contains(secret) && !String(reflecting: error).contains(secret),
                "\(what): the password is in the error: \(error)", sourceLocation: sourceLocation)
        }
    }

    @Test("a malformed URL is misuse, quickly, without its password")
    func malformedURL() async throws {
        let secret = "Malformed-Secret-4"
        let outcome = await Self.open(url: "postgresql://strata:\(secret)@[::1/strata")
        Self.expectTyped(outcome, "malformed URL", secret: secret) {
            if case .misuse = $0 { true } else { false }
        }
    }

    @Test("a wrong password is a login io error that names neither password; the right one opens")
    func wrongPassword() async throws {
        let port = try Self.serverPort()
        let role = "strata_pw_\(UInt32.random(in: 0...UInt32.max))"
        let right = "Right-Secret-\(UInt16.random(in: 1000...9999))"
        let wrong = "Wrong-Secret-\(UInt16.random(in: 1000...9999))"
        let sql = try PostgresSQL()
        try sql.execute("CREATE ROLE \(PostgresSQL.identifier(role)) LOGIN PASSWORD \(PostgresSQL.literal(right))")
        try sql.execute("GRANT CREATE ON DATABASE strata TO \(PostgresSQL.identifier(role))")
        defer {
            _ = try? sql.execute(
                "DROP OWNED BY \(PostgresSQL.identifier(role)); DROP ROLE \(PostgresSQL.identifier(role))")
        }

        let outcome = await Self.open(
            url: "postgresql://\(role):\(wrong)@127.0.0.1:\(port)/strata", schema: "s_\(role)")
        Self.expectTyped(outcome, "wrong password", secret: wrong) {
            if case .io = $0 { true } else { false }
        }
        #expect(outcome.error.map { !$0.description.contains(right) } ?? true, "the right password is in the error")
        #expect(outcome.error?.description.contains("password") == true, "the message should point at the password")
        // The same role, over the same TCP path, with the right password: the failure above was the password's.
        let opened = await Self.open(url: "postgresql://\(role):\(right)@127.0.0.1:\(port)/strata", schema: "s_\(role)")
        #expect(
            opened.error == nil && opened.other == nil,
            "the right password did not open: \(String(describing: opened.error))")
    }

    /// A refused connection looks like a server restarting (between its stop and its start), so
    /// it is tried again until the connect timeout has passed; then it is an io error saying so.
    @Test("a closed loopback port is an io error once the connect timeout has passed, saying it was retried")
    func closedPort() async throws {
        let port = try LoopbackSocket.closedPort()
        let outcome = await Self.open(url: "postgresql://strata@127.0.0.1:\(port)/strata")
        Self.expectTyped(outcome, "closed port \(port)") {
            if case .io = $0 { true } else { false }
        }
        #expect(outcome.error?.description.contains("tried again for connectTimeout") == true)
        #expect(outcome.error?.native?.message.contains("Connection refused") == true)
    }

    @Test("a port that accepts and never answers is an io error after the connect timeout, not later")
    func silentPort() async throws {
        let listener = try LoopbackSocket(listening: true)
        let outcome = await Self.open(url: "postgresql://strata@127.0.0.1:\(listener.port)/strata")
        withExtendedLifetime(listener) {}
        Self.expectTyped(outcome, "silent port \(listener.port)") {
            if case .io = $0 { true } else if case .busy = $0 { true } else { false }
        }
        #expect(outcome.took >= Self.connectTimeout - .milliseconds(100), "it gave up before the connect timeout")
    }

    @Test(
        "a schema name PostgreSQL cannot take is misuse giving its own reason",
        arguments: [
            ("", "it is empty"), (String(repeating: "s", count: 64), "it is 64 bytes long"),
            ("a\u{0}b", "contains a NUL character"), ("pg_store", "starting with pg_ are reserved"),
            ("information_schema", "information_schema is PostgreSQL's own schema"),
        ])
    func refusedSchemaName(schema: String, reason: String) async throws {
        let url = try #require(TestPostgres.url)
        let outcome = await Self.open(url: url, schema: schema)
        Self.expectTyped(outcome, "schema \(String(reflecting: schema))") {
            if case .misuse = $0 { true } else { false }
        }
        #expect(outcome.error?.description.contains(reason) == true, "\(String(describing: outcome.error))")
        #expect(outcome.error?.description.contains("Choose another name") == true)
    }

    @Test("a missing database is notAStore")
    func missingDatabase() async throws {
        let port = try Self.serverPort()
        let url = try #require(TestPostgres.url)
        let host = try #require(URLComponents(string: url)?.queryItems?.first { $0.name == "host" }?.value)
        let outcome = await Self.open(url: "postgresql://strata@/strata_no_such_database?host=\(host)&port=\(port)")
        Self.expectTyped(outcome, "missing database") {
            if case .notAStore = $0 { true } else { false }
        }
        #expect(outcome.error?.description.contains("database") == true)
    }

    @Test("a missing schema with requireExistingSchema is notAStore and creates nothing")
    func missingSchema() async throws {
        let url = try #require(TestPostgres.url)
        let schema = "s_missing_\(UInt32.random(in: 0...UInt32.max))"
        let outcome = await Self.open(
            url: url, schema: schema,
            options: PostgresOptions(connectTimeout: Self.connectTimeout, creation: .requireExistingSchema))
        Self.expectTyped(outcome, "missing schema") {
            if case .notAStore = $0 { true } else { false }
        }
        #expect(outcome.error?.description.contains("schema") == true)
        let exists = try PostgresSQL().value("SELECT count(*) FROM pg_namespace WHERE nspname = $1", [schema])
        #expect(exists == "0", "the refused open created the schema")
    }

    @Test("an empty schema with requireExistingSchema is notAStore and gets no store")
    func emptySchema() async throws {
        let url = try #require(TestPostgres.url)
        let schema = "s_empty_\(UInt32.random(in: 0...UInt32.max))"
        let sql = try PostgresSQL()
        try sql.execute("CREATE SCHEMA \(PostgresSQL.identifier(schema))")
        defer { _ = try? sql.execute("DROP SCHEMA \(PostgresSQL.identifier(schema)) CASCADE") }
        let outcome = await Self.open(
            url: url, schema: schema,
            options: PostgresOptions(connectTimeout: Self.connectTimeout, creation: .requireExistingSchema))
        Self.expectTyped(outcome, "empty schema") {
            if case .notAStore = $0 { true } else { false }
        }
        #expect(outcome.error?.description.contains("holds no store") == true, "\(String(describing: outcome.error))")
        let tables = try sql.value(
            "SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1",
            [schema])
        #expect(tables == "0", "the refused open made tables")
    }

    @Test("a schema made by something else is notAStore naming its tables, and is left alone")
    func foreignSchema() async throws {
        let url = try #require(TestPostgres.url)
        let schema = "s_foreign_\(UInt32.random(in: 0...UInt32.max))"
        let sql = try PostgresSQL()
        let quoted = PostgresSQL.identifier(schema)
        try sql.execute(
            """
            CREATE SCHEMA \(quoted); CREATE TABLE \(quoted).customers (id int PRIMARY KEY, name text);
            INSERT INTO \(quoted).customers VALUES (1, 'Ada')
            """)
        let before = try sql.dump(schema: schema)
        let outcome = await Self.open(url: url, schema: schema)
        Self.expectTyped(outcome, "foreign schema") {
            if case .notAStore = $0 { true } else { false }
        }
        #expect(outcome.error?.description.contains("customers") == true, "the message should name the foreign table")
        #expect(try sql.dump(schema: schema) == before, "the refused open changed the foreign schema")
    }
}
