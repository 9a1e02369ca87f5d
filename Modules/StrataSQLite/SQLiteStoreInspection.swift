package import Foundation
package import StrataStorage

extension EngineConfiguration {
    /// Read-only access to an existing SQLite store at `url`, for tools without a model: its record
    /// and `PRAGMA integrity_check`, both on a read-only connection, and the configuration that opens it.
    package static func sqliteInspection(at url: URL) -> StoreInspection {
        let path = url.path(percentEncoded: false)
        return StoreInspection(
            engineName: "sqlite", location: path,
            readRecord: { try SQLiteStoreInspection.readRecord(path: path) },
            integrityProblems: { try SQLiteStoreInspection.integrityProblems(path: path) },
            readHistorySummary: { try SQLiteStoreInspection.historySummary(path: path) },
            configuration: .sqlite(at: url))
    }
}

/// The read-only queries behind ``StrataStorage/EngineConfiguration/sqliteInspection(at:)``.
enum SQLiteStoreInspection {
    /// The store's metadata, nil when no file is at `path`.
    /// - Throws: `.notAStore` for a directory, an empty file, a file without SQLite's header or a
    ///   database without `strata_metadata`; `.storeCorrupt` for incomplete metadata.
    static func readRecord(path: String) throws(StrataError) -> StoreRecord? {
        guard try SQLiteEngine.probeFile(at: path) else { return nil }
        return try withConnection(path: path) { (connection) throws(StrataError) -> StoreRecord in
            let tables = try connection.queryInt64(
                "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'strata_metadata'")
            guard tables == 1 else {
                throw .notAStore(
                    path: path, reason: "it is a SQLite database without a strata_metadata table (not a Strata store)")
            }
            let metadata = try SQLiteEngine.readMetadata(connection)
            let json = try connection.queryText(
                "SELECT value FROM strata_metadata WHERE key = ?1", [.text(SQLiteEngine.recordedSchemaKey)])
            return StoreRecord(
                identifier: metadata.identifier, schemaVersion: metadata.schemaVersion, recordedJSON: json)
        }
    }

    /// What `PRAGMA integrity_check` reports, each line a problem; none when it says `ok`.
    static func integrityProblems(path: String) throws(StrataError) -> [String] {
        try withConnection(path: path) { (connection) throws(StrataError) -> [String] in
            let statement = try connection.statement("PRAGMA integrity_check")
            defer { statement.reset() }
            var lines: [String] = []
            while try statement.step() { lines.append(statement.text(at: 0) ?? "") }
            return lines == ["ok"] ? [] : lines
        }
    }

    /// How many history transactions `strata_history` keeps and its oldest token, in one query
    /// that decodes none; an empty summary for a store made before history.
    static func historySummary(path: String) throws(StrataError) -> HistorySummary {
        try withConnection(path: path) { (connection) throws(StrataError) -> HistorySummary in
            let tables = try connection.queryInt64(
                "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'strata_history'")
            guard tables == 1 else { return HistorySummary(transactions: 0, oldestToken: nil) }
            let statement = try connection.statement("SELECT count(*), min(token) FROM strata_history")
            defer { statement.reset() }
            guard try statement.step() else { return HistorySummary(transactions: 0, oldestToken: nil) }
            return HistorySummary(
                transactions: Int(statement.int64(at: 0)),
                oldestToken: statement.isNull(at: 1) ? nil : statement.int64(at: 1))
        }
    }

    /// Runs `body` on a read-only connection whose file starts with SQLite's header.
    private static func withConnection<T>(
        path: String, _ body: (SQLiteConnection) throws(StrataError) -> T
    ) throws(StrataError) -> T {
        let connection = try SQLiteConnection(path: path, readOnly: true, busyTimeout: 5000)
        defer { connection.close() }
        try SQLiteEngine.checkHeader(connection)
        return try body(connection)
    }
}
