import Foundation
import StrataTestSupport
import Testing

/// Damage done to closed stores behind Strata's back, through each engine's own tools: the
/// `sqlite3` shell, LMDB's `mdb_dump`/`mdb_load`, and SQL on PostgreSQL.
enum ToolDamage {
    /// Runs a tool on PATH to its end; fails the test when it fails.
    @discardableResult
    static func shell(_ tool: String, _ arguments: [String], input: String? = nil) throws -> String {
        let run = try ChildProcess.run(
            URL(fileURLWithPath: "/usr/bin/env"), [tool] + arguments, input: input.map { Data($0.utf8) })
        try #require(run.status == 0, "\(tool) \(arguments) failed: \(String(decoding: run.error, as: UTF8.self))")
        return String(decoding: run.output, as: UTF8.self)
    }

    /// Runs SQL on a closed SQLite store with the `sqlite3` shell.
    static func sqlite(_ store: TestStore, _ sql: String) throws {
        try shell("sqlite3", [store.directory.appendingPathComponent("store.sqlite").path, sql])
    }

    /// Runs SQL on a PostgreSQL store's schema (named `S` in `sql`, replaced by the quoted schema).
    static func postgres(_ store: TestStore, _ sql: String) throws {
        let schema = TestPostgres.schema(for: store.directory.appendingPathComponent("store.postgres"))
        _ = try PostgresSQL().execute(sql.replacingOccurrences(of: "S.", with: PostgresSQL.identifier(schema) + "."))
    }

    /// Rewrites the first entry of an LMDB store's database `name` with `change` applied to its
    /// key and value as `mdb_dump` prints them (hex), through `mdb_load`.
    static func lmdbRewriteFirst(
        _ store: TestStore, database name: String, _ change: (_ key: inout String, _ value: inout String) -> Void
    ) throws {
        let directory = store.directory.appendingPathComponent("store.lmdb").path
        let dump = try shell("mdb_dump", ["-s", name, directory])
        var lines = dump.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let header = try #require(lines.firstIndex(of: "HEADER=END"))
        var key = lines[header + 1].trimmingCharacters(in: .whitespaces)
        var value = lines[header + 2].trimmingCharacters(in: .whitespaces)
        change(&key, &value)
        lines[header + 1] = " " + key
        lines[header + 2] = " " + value
        let first = lines[...(header + 2)] + ["DATA=END", ""]
        try shell("mdb_load", ["-s", name, directory], input: first.joined(separator: "\n"))
    }
}
