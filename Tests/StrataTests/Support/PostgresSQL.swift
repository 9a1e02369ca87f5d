// The tests' only contact with libpq's C API (the C-facing file of the test target): a plain
// SQL connection to the test server, for raw edits and inspection of a PostgreSQL store, for
// holding its locks from "another client", and for making roles and databases. Values in,
// values out: no pointer leaves a call.
import CPostgres
import Foundation
import StrataTestSupport

/// A failure of the tests' own SQL (not of the engine under test): the SQLSTATE when the server
/// sent one, and libpq's message.
struct PostgresSQLError: Error, CustomStringConvertible {
    var sqlState: String?
    var message: String

    var description: String { "PostgreSQL \(sqlState.map { "SQLSTATE \($0): " } ?? "")\(message)" }
}

/// One blocking libpq connection to the test server, used by one task at a time.
final class PostgresSQL {
    private let connection: OpaquePointer

    /// Connects to `url` (default: the test server from `STRATA_POSTGRES_URL`).
    init(url: String? = TestPostgres.url) throws {
        guard let url else {
            throw PostgresSQLError(message: "\(TestPostgres.variable) is not set: run the tests with Scripts/test.sh")
        }
        guard let connection = PQconnectdb(url) else {
            throw PostgresSQLError(message: "PQconnectdb returned no connection (out of memory)")
        }
        guard PQstatus(connection) == CONNECTION_OK else {
            let message = String(cString: PQerrorMessage(connection))
            PQfinish(connection)
            throw PostgresSQLError(message: message)
        }
        self.connection = connection
    }

    deinit { PQfinish(connection) }

    /// The server process serving this connection.
    var backendPID: Int32 { PQbackendPID(connection) }

    /// Runs `sql` (one or more statements, no parameters) and returns the last one's rows as
    /// text (NULL as nil).
    @discardableResult
    func execute(_ sql: String) throws -> [[String?]] {
        let result = PQexec(connection, sql)
        defer { PQclear(result) }
        return try rows(of: result)
    }

    /// Runs one statement with text parameters `$1`, `$2`, … and returns its rows as text.
    @discardableResult
    func execute(_ sql: String, _ parameters: [String?]) throws -> [[String?]] {
        var cStrings: [UnsafeMutablePointer<CChar>?] = parameters.map { $0.flatMap { strdup($0) } }
        defer { cStrings.forEach { free($0) } }
        let result = cStrings.withUnsafeMutableBufferPointer { buffer in
            buffer.baseAddress!.withMemoryRebound(to: UnsafePointer<CChar>?.self, capacity: buffer.count) { values in
                PQexecParams(connection, sql, Int32(parameters.count), nil, values, nil, nil, 0)
            }
        }
        defer { PQclear(result) }
        return try rows(of: result)
    }

    /// Runs `sql` and returns the first column of the first row.
    func value(_ sql: String, _ parameters: [String?] = []) throws -> String? {
        try execute(sql, parameters).first?.first ?? nil
    }

    private func rows(of result: OpaquePointer?) throws -> [[String?]] {
        guard let result else {
            throw PostgresSQLError(message: String(cString: PQerrorMessage(connection)))
        }
        let status = PQresultStatus(result)
        guard status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK else {
            let sqlState = PQresultErrorField(result, strata_pg_diag_sqlstate()).map { String(cString: $0) }
            throw PostgresSQLError(sqlState: sqlState, message: String(cString: PQresultErrorMessage(result)))
        }
        return (0..<PQntuples(result)).map { row in
            (0..<PQnfields(result)).map { column in
                PQgetisnull(result, row, column) == 1 ? nil : String(cString: PQgetvalue(result, row, column))
            }
        }
    }

    /// A schema name no other test uses: `prefix` and 16 hex digits of a new UUID.
    static func uniqueSchema(_ prefix: String) -> String {
        prefix + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased().prefix(16)
    }

    /// Drops `schema` and everything in it, quietly; for a test's cleanup (errors are ignored).
    static func dropSchema(_ schema: String) {
        _ = try? PostgresSQL().execute("SET client_min_messages TO warning; DROP SCHEMA \(identifier(schema)) CASCADE")
    }

    /// `name` quoted as an SQL identifier.
    static func identifier(_ name: String) -> String {
        "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// `text` quoted as an SQL string literal.
    static func literal(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
    }
}

extension TestStore {
    /// The PostgreSQL schema of this store (`kind == .postgres` only).
    var postgresSchema: String {
        TestPostgres.schema(for: directory.appendingPathComponent("store.postgres"))
    }
}

extension PostgresSQL {
    /// Every row of every table of `schema`, as `table: (values…)` lines in a stable order: the
    /// analogue of an embedded store's file bytes, for "the store is unchanged" checks.
    func dump(schema: String) throws -> [String] {
        let tables = try execute(
            "SELECT relname FROM pg_class WHERE relnamespace = $1::regnamespace AND relkind = 'r' ORDER BY relname",
            [schema]
        ).compactMap { $0.first ?? nil }
        var lines: [String] = []
        for table in tables {
            let qualified = Self.identifier(schema) + "." + Self.identifier(table)
            lines += try execute("SELECT t::text FROM \(qualified) t ORDER BY 1").map {
                "\(table): \($0.first.flatMap { $0 } ?? "")"
            }
        }
        return lines
    }

    /// The definitions of the Strata-managed tables of `schema` (not `strata_*`): every column
    /// with its type and nullability, and every index's definition, with the schema's name
    /// taken out so two stores compare.
    func definitions(schema: String) throws -> [String] {
        let columns = try execute(
            """
            SELECT table_name || '.' || column_name || ' ' || data_type || ' ' || is_nullable
            FROM information_schema.columns WHERE table_schema = $1 AND table_name NOT LIKE 'strata\\_%'
            """, [schema]
        ).compactMap { $0.first ?? nil }
        let indexes = try execute(
            """
            SELECT replace(replace(indexdef, $2, 'S'), $1 || '.', 'S.') FROM pg_indexes
            WHERE schemaname = $1 AND tablename NOT LIKE 'strata\\_%'
            """,
            [schema, Self.identifier(schema)]
        ).compactMap { $0.first ?? nil }
        return (columns + indexes).sorted()
    }
}

extension PostgresSQL {
    /// A PostgreSQL client program (`pg_dump`, `psql`) of the newest installed version.
    static func tool(_ name: String) -> String {
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
        for version in versions.sorted(by: { (Int($0) ?? 0) > (Int($1) ?? 0) }) {
            let path = "/usr/lib/postgresql/\(version)/bin/\(name)"
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return "/usr/bin/" + name
    }

    /// Replaces schema `destination` with a copy of schema `source` (tables, rows, indexes,
    /// sequences: what `pg_dump -n` writes, renamed), the analogue of copying a store's files.
    /// Both stores must be closed.
    static func copySchema(from source: String, to destination: String, url: String? = TestPostgres.url) throws {
        guard let url else { throw PostgresSQLError(message: "\(TestPostgres.variable) is not set") }
        try PostgresSQL(url: url).execute("DROP SCHEMA IF EXISTS \(identifier(destination)) CASCADE")
        let process = SpawnedProcess()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        // Schema names are `s_` and 16 hex digits, so the textual rename touches nothing else.
        process.arguments = [
            "-c",
            """
            set -o pipefail; "$1" --no-owner --no-privileges -n "$2" --dbname="$4" \
            | sed "s/$2/$3/g" | "$5" -X -q -v ON_ERROR_STOP=1 --dbname="$4" >/dev/null
            """,
            "copy-schema", tool("pg_dump"), source, destination, url, tool("psql"),
        ]
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw PostgresSQLError(message: "copying schema \(source) to \(destination) failed: \(message)")
        }
    }
}
