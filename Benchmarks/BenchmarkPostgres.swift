import Foundation
import Strata
import StrataPostgres

/// The PostgreSQL server of a run and the schemas the run makes on it.
///
/// Every store of the benchmark has a scratch directory; on PostgreSQL that directory names a
/// schema instead: the run's prefix (`strata_bench_` and 8 random hex digits, fresh for every
/// run) and a hash of the path. ``removeScratch(_:)`` drops a store's schema with its directory,
/// and the run drops every schema with its prefix at the end, so nothing stays on the server.
enum BenchmarkPostgres {
    /// The server's URL, set once from the command line (`--postgres-url`, else
    /// `STRATA_POSTGRES_URL`) before any measurement; nil when PostgreSQL is not measured.
    nonisolated(unsafe) static var url: String?
    /// The server's version, read when the run checks the server.
    nonisolated(unsafe) static var serverVersion: String?

    /// The variable that names the server when `--postgres-url` is not given.
    static let variable = "STRATA_POSTGRES_URL"

    /// The prefix of every schema of this run.
    static let prefix = "strata_bench_\(String(UInt32.random(in: 0...UInt32.max), radix: 16))_"

    /// Options of the benchmark's Strata stores: the defaults, with room in the pool for
    /// workload 7's eight tasks.
    static let options = PostgresOptions(poolSize: 16)

    /// The run's URL.
    /// - Throws: ``BenchmarkError/usage(_:)`` when there is none.
    static func requireURL() throws(BenchmarkError) -> String {
        guard let url else {
            throw .usage("--engine postgres needs a server: pass --postgres-url URL or set \(variable)")
        }
        return url
    }

    /// The schema of the store whose scratch directory is `directory`.
    static func schema(for directory: URL) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in directory.standardizedFileURL.path.utf8 { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        let hex = String(hash, radix: 16)
        return prefix + String(repeating: "0", count: 16 - hex.count) + hex
    }

    /// The configuration of the Strata store whose scratch directory is `directory`.
    static func configuration(for directory: URL) -> EngineConfiguration {
        guard let url else {
            return EngineConfiguration(name: "postgres", location: directory) { _ in
                throw StrataError.misuse(
                    "strata-bench has no PostgreSQL server: pass --postgres-url or set \(variable)")
            }
        }
        return .postgres(url: url, schema: schema(for: directory), options: options)
    }

    /// Connects once before measuring, so that a wrong URL stops the run at once with libpq's
    /// reason; records the server's version for the report.
    static func check() throws(BenchmarkError) {
        let link = try PGLink(url: try requireURL())
        serverVersion = link.serverVersion
    }

    /// Drops the schema of the store in `directory`, if this run made one there. Failures are
    /// left to ``dropRunSchemas()``.
    static func dropSchema(for directory: URL) {
        guard let url else { return }
        let name = schema(for: directory)
        _ = try? PGLink(url: url).execute(
            "SET client_min_messages = warning; SET lock_timeout = '5s'; DROP SCHEMA IF EXISTS \"\(name)\" CASCADE")
    }

    /// Drops every schema of this run; returns a message per schema that could not be dropped.
    @discardableResult
    static func dropRunSchemas() -> [String] {
        guard let url else { return [] }
        do {
            let link = try PGLink(url: url)
            let names = try link.execute(
                "SELECT nspname FROM pg_namespace WHERE starts_with(nspname, '\(prefix)') ORDER BY 1"
            ).compactMap(\.first)
            var problems: [String] = []
            for name in names {
                do {
                    try link.execute(
                        "SET client_min_messages = warning; SET lock_timeout = '10s'; "
                            + "DROP SCHEMA IF EXISTS \"\(name)\" CASCADE")
                } catch {
                    problems.append("could not drop schema \(name): \(error)")
                }
            }
            return problems
        } catch {
            return ["could not drop the run's schemas (\(prefix)*): \(error)"]
        }
    }
}
