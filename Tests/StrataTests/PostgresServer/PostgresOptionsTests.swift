import Foundation
import Strata
import StrataTestSupport
import Testing

@testable import StrataPostgres

/// `PostgresOptions` a careless caller might pass: options no store can run with are refused
/// with `.misuse` naming the option before any connection is made; the largest timeouts open
/// and work (they count as PostgreSQL's largest, about 24.8 days) instead of trapping on an
/// overflow; a URL setting libpq refuses is `.misuse` naming it, not "cannot connect".
@Suite("PostgreSQL: options")
struct PostgresOptionsTests {
    /// Options that no store can run with, and the option's name the message must hold.
    static let refused: [(String, PostgresOptions)] = {
        func options(_ change: (inout PostgresOptions) -> Void) -> PostgresOptions {
            var options = PostgresOptions()
            change(&options)
            return options
        }
        return [
            ("poolSize", options { $0.poolSize = 1 }),
            ("poolSize", options { $0.poolSize = -5 }),
            ("poolSize", PostgresOptions(poolSize: 0)),
            ("connectTimeout", options { $0.connectTimeout = .zero }),
            ("statementTimeout", options { $0.statementTimeout = .zero }),
            ("statementTimeout", options { $0.statementTimeout = .nanoseconds(-1) }),
            ("lockTimeout", options { $0.lockTimeout = .seconds(-1) }),
            ("checkoutTimeout", options { $0.checkoutTimeout = .milliseconds(-3) }),
            ("applicationName", options { $0.applicationName = String(repeating: "a", count: 64) }),
            ("applicationName", options { $0.applicationName = "nul\u{0}name" }),
        ]
    }()

    @Test("options no store can run with are misuse naming the option, and nothing is created")
    func refusedOptions() async throws {
        let url = try #require(TestPostgres.url, "\(TestPostgres.variable) is not set: run with Scripts/test.sh")
        for (index, (name, options)) in Self.refused.enumerated() {
            let schema = "s_refused_option_\(index)"
            let outcome = await PostgresBadInputTests.open(url: url, schema: schema, options: options)
            PostgresBadInputTests.expectTyped(outcome, "PostgresOptions.\(name) refused") {
                if case .misuse(let detail, _) = $0 { detail.contains("PostgresOptions.\(name)") } else { false }
            }
            let made = try PostgresSQL().execute(
                "SELECT count(*) FROM pg_namespace WHERE nspname = '\(schema)'")
            #expect(made.first?.first == "0", "refused options still created the schema \(schema)")
        }
    }

    @Test("the largest timeouts open, write and read: they count as PostgreSQL's largest, without an overflow")
    func largestTimeouts() async throws {
        let url = try #require(TestPostgres.url, "\(TestPostgres.variable) is not set: run with Scripts/test.sh")
        let largest = Duration.seconds(Int64.max)
        let options = PostgresOptions(
            connectTimeout: largest, statementTimeout: largest, lockTimeout: largest, checkoutTimeout: largest,
            applicationName: String(repeating: "n", count: 63))
        let container = try PersistentContainer(
            schema: TestModels.schema, engine: .postgres(url: url, schema: "s_largest_timeouts", options: options))
        defer { container.close() }
        let context = container.newBackgroundContext()
        let count = try await context.perform {
            Account(context: context).name = "patient"
            try context.save()
            return try context.count(for: FetchRequest<Account>())
        }
        #expect(count == 1)
        // Every new connection asks the server for its largest timeouts.
        let settings = try PostgresConnectionSettings(url: url, schema: "s_largest_timeouts", options: options)
        let serverOptions = try #require(settings.keywords.first { $0.0 == "options" }?.1)
        #expect(serverOptions.contains("statement_timeout=2147483647 "), "\(serverOptions)")
        #expect(serverOptions.contains("lock_timeout=2147483647 "), "\(serverOptions)")
        #expect(settings.keywords.contains { $0 == ("connect_timeout", "2147484") }, "\(settings.keywords)")
    }

    @Test("a URL setting libpq refuses is misuse naming the setting, not an unreachable server")
    func refusedURLSetting() async throws {
        let url = try #require(TestPostgres.url, "\(TestPostgres.variable) is not set: run with Scripts/test.sh")
        let host = try #require(URLComponents(string: url)?.queryItems?.first { $0.name == "host" }?.value)
        let refused = [("port", "notaport"), ("sslmode", "sometimes"), ("target_session_attrs", "sometimes")]
        for (setting, value) in refused {
            let outcome = await PostgresBadInputTests.open(
                url: "postgresql://strata@/strata?host=\(host)&\(setting)=\(value)", schema: "s_bad_setting")
            PostgresBadInputTests.expectTyped(outcome, "\(setting)=\(value)") {
                if case .misuse = $0 { String(reflecting: $0).contains(value) } else { false }
            }
        }
    }
}
