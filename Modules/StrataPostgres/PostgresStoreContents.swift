import Foundation
import StrataStorage

/// The conformance kit's raw access to a PostgreSQL store (``StrataStorage/StoreContents``):
/// the values of its `strata_metadata`, ordered by key, read and overwritten on a connection of
/// its own. The store has no files to damage; this is what the kit damages instead.
enum PostgresStoreContents {
    static func contents(url: String, schema: String, options: PostgresOptions) -> StoreContents {
        StoreContents(
            read: {
                try withMetadata(url: url, schema: schema, options: options) { (session, table) throws(StrataError) in
                    let result = try session.run("SELECT value FROM \(table) ORDER BY key")
                    return (0..<result.rowCount).map { Data((result.bytes($0, 0) ?? [])) }
                }
            },
            write: { parts in
                try withMetadata(url: url, schema: schema, options: options) { (session, table) throws(StrataError) in
                    let keys = try session.run("SELECT key FROM \(table) ORDER BY key")
                    for row in 0..<min(keys.rowCount, parts.count) {
                        guard let key = keys.bytes(row, 0) else { continue }
                        // The column is text: invalid UTF-8 becomes U+FFFD, NUL is left out.
                        let text = String(decoding: parts[row].filter { $0 != 0 }, as: UTF8.self)
                        try session.run(
                            "UPDATE \(table) SET value = $2 WHERE key = $1",
                            [.rawText(String(decoding: key, as: UTF8.self)), .rawText(text)])
                    }
                }
            })
    }

    /// Runs `body` on a fresh connection with the quoted metadata table's name.
    static func withMetadata<T>(
        url: String, schema: String, options: PostgresOptions,
        _ body: (PostgresSession, String) throws(StrataError) -> T
    ) throws -> T {
        let settings = try PostgresConnectionSettings(url: url, schema: schema, options: options)
        let pool = PostgresPool(settings: settings, options: options)
        defer { pool.close() }
        let connection = try pool.checkOut(.short, phase: .opening)
        defer { pool.checkIn(connection, .short) }
        return try body(
            PostgresSession(connection: connection, pool: pool), PostgresStoreNames(schema: schema).metadata)
    }
}
