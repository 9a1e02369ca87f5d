import Foundation
import StrataTestSupport
import Testing

extension LedgerTests {
    /// The built `ledger` command line on the test PostgreSQL server (`STRATA_POSTGRES_URL`):
    /// `--store` is the server's URL and `--schema` the ledger's schema.
    @Suite("ledger CLI on PostgreSQL")
    struct LedgerCLIPostgresTests {
        @Test("init creates the schema, the commands work in it, and the others need it to exist")
        func worksInASchema() async throws {
            let url = try Self.serverURL()
            let binary = try LedgerCLIMigrationTests.ledgerBinary()
            let schema = Self.freshSchema()
            defer { Self.drop(schema, url) }
            let options = ["--engine", "postgres", "--store", url, "--schema", schema]

            let missing = try await BenchmarkBinary.run(binary, options + ["account", "list"])
            #expect(missing.status == 1, "\(missing)")
            #expect(missing.errorOutput.contains("schema \(schema) does not exist"), "\(missing.errorOutput)")

            // An empty schema (made by a DBA, say) holds no store: a read-only command makes none.
            let sql = try PostgresSQL()
            try sql.execute("CREATE SCHEMA \(PostgresSQL.identifier(schema))")
            let empty = try await BenchmarkBinary.run(binary, options + ["account", "list"])
            #expect(empty.status == 1 && empty.errorOutput.contains("holds no store"), "\(empty)")
            let tables = try sql.value(
                "SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1",
                [schema])
            #expect(tables == "0", "a read-only command made \(tables ?? "?") tables")

            let created = try await BenchmarkBinary.run(binary, options + ["init"])
            #expect(created.status == 0, "\(created.errorOutput)")
            #expect(created.output.hasPrefix("Created the ledger store at "), "\(created.output)")
            #expect(created.output.contains(schema) && created.output.contains("0 account(s)"), "\(created.output)")
            let opened = try await BenchmarkBinary.run(binary, options + ["init"])
            #expect(opened.output.hasPrefix("Opened the ledger store at "), "\(opened.output)")

            for command in [
                ["account", "add", "Checking", "--opening", "100"], ["account", "add", "Savings"],
                ["transfer", "Checking", "Savings", "25", "Rainy day"],
            ] {
                let run = try await BenchmarkBinary.run(binary, options + command)
                #expect(run.status == 0, "ledger \(command) failed: \(run.errorOutput)")
            }
            let history = try await BenchmarkBinary.run(binary, options + ["history", "Savings"])
            #expect(history.output.contains("Savings: 25.00 USD after 1 transaction(s)"), "\(history.output)")
            #expect(history.output.contains("Rainy day"), "\(history.output)")

            let demo = try await BenchmarkBinary.run(binary, options + ["demo"])
            #expect(demo.status == 65, "demo on a ledger with accounts: \(demo)")
            #expect(demo.errorOutput.contains("Pass --schema with a new schema name"), "\(demo.errorOutput)")
        }

        @Test("demo runs in a new schema and prints a command line that opens it again")
        func demoAndItsReopenLine() async throws {
            let url = try Self.serverURL()
            let binary = try LedgerCLIMigrationTests.ledgerBinary()
            let schema = Self.freshSchema()
            defer { Self.drop(schema, url) }

            let demo = try await BenchmarkBinary.run(
                binary, ["--engine", "postgres", "--store", url, "--schema", schema, "demo"])
            #expect(demo.status == 0, "\(demo.errorOutput)")
            let line = try #require(
                demo.output.split(separator: "\n").first { $0.hasPrefix("Explore this store: swift run ledger ") },
                "\(demo.output)")
            // --engine postgres --store 'URL' --schema NAME account list
            let words = line.dropFirst("Explore this store: swift run ledger ".count).split(separator: " ")
                .map { String($0).trimmingCharacters(in: ["'"]) }
            #expect(words.suffix(2) == ["account", "list"] && words.contains(schema), "\(line)")
            let again = try await BenchmarkBinary.run(binary, words)
            #expect(again.status == 0, "the printed line does not open the store: \(again.errorOutput)")
            #expect(again.output.contains("Wallet"), "\(again.output)")
        }

        @Test("a password in the URL appears in no output, whether the login succeeds or not")
        func passwordStaysHidden() async throws {
            let url = try Self.serverURL()
            let password = "Sekr3t-pw-\(UInt32.random(in: 0...UInt32.max))"
            // The test server trusts its socket, so the password is ignored there and the login
            // succeeds; a server that checks passwords refuses it. Neither may print it.
            let range = try #require(
                url.range(of: #"://[^:/@?]+@"#, options: .regularExpression),
                "the test URL names no user to add a password to: \(url)")
            let user = url[range].dropFirst(3).dropLast()
            let withPassword = url.replacingCharacters(in: range, with: "://\(user):\(password)@")
            let binary = try LedgerCLIMigrationTests.ledgerBinary()
            let schema = Self.freshSchema()
            defer { Self.drop(schema, url) }

            for command in [["init"], ["account", "list"], ["demo"], ["account", "show", "Nobody"]] {
                let run = try await BenchmarkBinary.run(
                    binary, ["--engine", "postgres", "--store", withPassword, "--schema", schema] + command)
                #expect(!run.output.contains(password) && !run.errorOutput.contains(password), "\(command): \(run)")
            }
        }

        /// The test server's URL; without one the test fails, saying how to start one.
        static func serverURL() throws -> String {
            try #require(
                TestPostgres.url,
                """
                \(TestPostgres.variable) is not set: run the tests under bash Scripts/with-postgres.sh \
                (bash Scripts/with-postgres.sh swift test), which starts a server
                """
            )
        }

        /// A schema name no other test uses.
        static func freshSchema() -> String {
            "ledger_cli_" + String(UInt64.random(in: 0...UInt64.max), radix: 16)
        }

        /// Drops `schema` with `psql`, so that the tests leave nothing on the server.
        static func drop(_ schema: String, _ url: String) {
            _ = try? BenchmarkBinary.runBlocking(
                URL(fileURLWithPath: "/usr/bin/env"),
                ["psql", "-X", "-q", url, "-c", "DROP SCHEMA IF EXISTS \"\(schema)\" CASCADE"])
        }
    }
}
