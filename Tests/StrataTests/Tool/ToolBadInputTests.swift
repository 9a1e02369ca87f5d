import Foundation
import StrataTestSupport
import Testing

@Suite("strata: bad input")
struct ToolBadInputTests {
    /// Expects one line on standard error, nothing on standard output and `status`.
    static func expectRefused(_ run: StrataCommandRun, status: Int32, mentioning text: String) {
        #expect(run.status == status, "exit \(run.status): \(run.error)")
        #expect(run.output.isEmpty)
        #expect(run.error.hasSuffix("\n") && run.error.dropLast().split(separator: "\n").count == 1, "\(run.error)")
        #expect(run.error.contains(text), "\(run.error)")
    }

    @Test(
        "bad arguments exit 2",
        arguments: [
            [], ["inspect"], ["frobnicate"], ["inspect", "sqlite:/x", "--fast"],
            ["history", "prune", "sqlite:/x"], ["history", "prune", "sqlite:/x", "--before", "yesterday"],
            ["history", "trim"], ["verify", "postgres://u@h/db"],
        ])
    func badArguments(arguments: [String]) async throws {
        let run = try await StrataCommandRun.run(arguments)
        Self.expectRefused(run, status: 2, mentioning: "strata: ")
    }

    @Test("an unknown scheme exits 3, an in-memory store 7")
    func schemes() async throws {
        Self.expectRefused(
            try await StrataCommandRun.run(["inspect", "mysql://db/x"]), status: 3, mentioning: "sqlite:PATH")
        Self.expectRefused(
            try await StrataCommandRun.run(["verify", "/tmp/store.sqlite"]), status: 3, mentioning: "names no engine")
        Self.expectRefused(
            try await StrataCommandRun.run(["inspect", "memory:books"]), status: 7, mentioning: "in-memory")
    }

    @Test("a missing store exits 4 and is not created", arguments: EngineKind.sharedAcrossProcesses)
    func missingStore(kind: EngineKind) async throws {
        let store = try TestStore(kind)
        let argument = try StrataCommandRun.argument(for: store)
        for command in [["inspect"], ["verify"], ["history", "prune"]] {
            let extra = command == ["history", "prune"] ? ["--before", "1"] : []
            Self.expectRefused(
                try await StrataCommandRun.run(command + [argument] + extra), status: 4, mentioning: "no store at")
        }
        let left = try FileManager.default.contentsOfDirectory(atPath: store.directory.path)
        #expect(left.isEmpty, "the tool created \(left)")
        if kind == .postgres {
            let schema = TestPostgres.schema(for: store.directory.appendingPathComponent("store.postgres"))
            let found = try PostgresSQL().value("SELECT count(*) FROM pg_namespace WHERE nspname = $1", [schema])
            #expect(found == "0", "the tool created the schema")
        }
    }

    @Test("another program's store exits 6", arguments: EngineKind.sharedAcrossProcesses)
    func foreignStore(kind: EngineKind) async throws {
        let store = try TestStore(kind)
        switch kind {
        case .sqlite:
            try ToolDamage.shell(
                "sqlite3",
                [
                    store.directory.appendingPathComponent("store.sqlite").path,
                    "CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('hi');",
                ])
        case .lmdb:
            let directory = store.directory.appendingPathComponent("store.lmdb")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try ToolDamage.shell("mdb_load", ["-T", "-s", "notes", directory.path], input: "greeting\nhello\n")
        case .postgres:
            let schema = TestPostgres.schema(for: store.directory.appendingPathComponent("store.postgres"))
            _ = try PostgresSQL().execute(
                "CREATE SCHEMA \(PostgresSQL.identifier(schema)); "
                    + "CREATE TABLE \(PostgresSQL.identifier(schema)).notes (body text)"
            )
        case .memory: Issue.record("no store outside the process")
        }
        let run = try await StrataCommandRun.run(["inspect", try StrataCommandRun.argument(for: store)])
        Self.expectRefused(run, status: 6, mentioning: "not a Strata store")
    }

    @Test("a wrong PostgreSQL password exits 5 and the message does not show it")
    func wrongPassword() async throws {
        let port = try PostgresBadInputTests.serverPort()
        let role = "tool_\(UInt32.random(in: 0...UInt32.max))"
        let sql = try PostgresSQL()
        _ = try sql.execute("CREATE ROLE \(PostgresSQL.identifier(role)) LOGIN PASSWORD 'right-secret'")
        defer { _ = try? sql.execute("DROP ROLE \(PostgresSQL.identifier(role))") }
        let run = try await StrataCommandRun.run([
            "inspect", "postgres://\(role):wrong-secret@127.0.0.1:\(port)/strata?schema=s_any",
        ])
        Self.expectRefused(run, status: 5, mentioning: "refused the login")
        #expect(!run.error.contains("wrong-secret"))
    }

    @Test("a user the PostgreSQL server does not know exits 5, over the Unix socket as over TCP")
    func unknownRole() async throws {
        let url = try #require(TestPostgres.url, "STRATA_POSTGRES_URL is not set: run with Scripts/with-postgres.sh")
        let port = try PostgresBadInputTests.serverPort()
        let role = "nobody_\(UInt32.random(in: 0...UInt32.max))"
        // The socket's URL with another user: the server says "role … does not exist" (no password asked).
        let socket = url.replacingOccurrences(of: "postgresql://strata@", with: "postgresql://\(role)@")
        #expect(socket != url, "the URL's form changed: \(url)")
        for argument in [socket + "&schema=s_any", "postgres://\(role):secret@127.0.0.1:\(port)/strata?schema=s_any"] {
            let run = try await StrataCommandRun.run(["inspect", argument])
            Self.expectRefused(run, status: 5, mentioning: "refused the login")
        }
    }

    @Test("a PostgreSQL database that does not exist exits 4, for inspect and verify and as a copy's target")
    func missingDatabase() async throws {
        let url = try #require(TestPostgres.url, "STRATA_POSTGRES_URL is not set: run with Scripts/with-postgres.sh")
        let database = "strata_missing_\(UInt32.random(in: 0...UInt32.max))"
        let missing = url.replacingOccurrences(of: "@/strata?", with: "@/\(database)?") + "&schema=s_any"
        #expect(missing.contains(database), "the URL's form changed: \(url)")
        let source = try await ToolFixture.seededStore(.sqlite)
        for command in [
            ["inspect", missing], ["verify", missing], ["copy", try StrataCommandRun.argument(for: source), missing],
        ] {
            let run = try await StrataCommandRun.run(command)
            Self.expectRefused(run, status: 4, mentioning: "does not exist")
        }
        let found = try PostgresSQL().value("SELECT count(*) FROM pg_database WHERE datname = $1", [database])
        #expect(found == "0", "the tool created the database")
    }

    @Test(
        "--help on every command",
        arguments: [
            ["--help"], ["inspect", "--help"], ["verify", "--help"],
            ["history", "--help"], ["history", "prune", "--help"],
        ])
    func help(arguments: [String]) async throws {
        let run = try await StrataCommandRun.run(arguments)
        #expect(run.status == 0)
        #expect(run.output.contains("Usage: strata"))
        #expect(run.error.isEmpty)
    }
}
