import Foundation
import StrataStorage

/// Persistent history (issue 15, groundwork): the `strata_history` table.
///
/// One row per committed change set whose ``ChangeSet/history`` is set: `token INTEGER PRIMARY
/// KEY`, `timestamp REAL` (seconds since 1970), `author TEXT`, `changes TEXT` (the
/// `[HistoryChange]` as JSON). The row is inserted by the commit's own `BEGIN IMMEDIATE …
/// COMMIT`, so a failed commit leaves none.
///
/// Tokens come from a counter row in `strata_metadata` (`history_token`, the last token handed
/// out), moved in the same transaction. A counter rather than `AUTOINCREMENT`: the last token
/// survives ``deleteHistory(before:force:)`` trimming every row, and ``currentHistoryToken()``
/// reads it in one lookup; and the store gains no `sqlite_sequence` table, which the open's shape
/// checks and tools that compare stores would otherwise meet. Named cursors and trimming:
/// `SQLiteEngine+HistoryCursors.swift`.
extension SQLiteEngine: HistoryStore {
    /// The `strata_metadata` key of the last history token handed out.
    static let historyTokenKey = "history_token"

    /// Creates the history table, its token counter and the cursors table when missing, inside
    /// the open's (or the creation's) write transaction: stores made before history gain them at
    /// their next open.
    static func prepareHistory(_ connection: SQLiteConnection) throws(StrataError) {
        try connection.execute(
            """
            CREATE TABLE IF NOT EXISTS strata_history (token INTEGER PRIMARY KEY, timestamp REAL NOT NULL, \
            author TEXT, changes TEXT NOT NULL)
            """)
        try connection.execute(
            "CREATE TABLE IF NOT EXISTS strata_history_cursors (name TEXT PRIMARY KEY, token INTEGER NOT NULL)")
        try connection.run(
            "INSERT OR IGNORE INTO strata_metadata (key, value) VALUES (?1, 0)", [.text(historyTokenKey)])
    }

    /// Appends `record` as the next history transaction, inside the write transaction open on
    /// `connection` (a commit's, or a migration's savepoint).
    /// - Throws: `.storeFull` when the token would pass `Int64.max`; `.misuse` for changes that do
    ///   not encode; `.storeCorrupt` for a damaged counter (missing, or behind the table); SQLite's errors.
    static func appendHistory(_ record: HistoryRecord, into connection: SQLiteConnection) throws(StrataError) {
        let last = try lastHistoryToken(connection)
        guard last < Int64.max else {
            throw .storeFull("\(connection.path): the history has used every token up to \(Int64.max)")
        }
        let token = last + 1
        let json: String
        do {
            // By hand: JSONEncoder cost several times the rest of an insert (Docs/Benchmarks.md, 10).
            json = String(decoding: try HistoryJSON.encode(record), as: UTF8.self)
        } catch {
            throw .misuse("the history of this change set does not encode as JSON: \(error)")
        }
        try connection.run(
            "UPDATE strata_metadata SET value = ?2 WHERE key = ?1", [.text(historyTokenKey), .integer(token)])
        do throws(StrataError) {
            try connection.run(
                "INSERT INTO strata_history (token, timestamp, author, changes) VALUES (?1, ?2, ?3, ?4)",
                [
                    .integer(token), .real(Date().timeIntervalSince1970),
                    record.author.map(StoredValue.text) ?? .null, .text(json),
                ])
        } catch .constraintViolation {
            // Only the token is unique: the counter fell behind the table (edited by hand?).
            throw .storeCorrupt(
                "\(connection.path): strata_history already has token \(token), the next one by \(historyTokenKey)")
        }
    }

    /// The last token handed out, 0 before the first, read in the transaction open on `connection`.
    /// - Throws: `.storeCorrupt` when the counter row is missing or not an integer.
    static func lastHistoryToken(_ connection: SQLiteConnection) throws(StrataError) -> Int64 {
        let statement = try connection.statement("SELECT value FROM strata_metadata WHERE key = ?1")
        defer { statement.reset() }
        try statement.bind(.text(historyTokenKey), at: 1)
        guard try statement.step(),
            case .integer(let token) = try statement.value(
                at: 0, as: .integer, isBool: false, place: { "strata_metadata.\(historyTokenKey)" })
        else {
            throw .storeCorrupt("\(connection.path): strata_metadata has no integer \(historyTokenKey)")
        }
        return token
    }

    /// One cached statement on a pooled reader connection, without `BEGIN`/`ROLLBACK` around
    /// it: a single `SELECT` is its own read transaction, and observers poll this.
    func currentHistoryToken() throws -> Int64 {
        let connection = try checkOutReader()
        defer { checkIn(connection) }
        return try Self.lastHistoryToken(connection)
    }

    func history(after token: Int64, limit: Int?) throws -> [HistoryTransaction] {
        if let limit, limit < 0 { throw StrataError.misuse("history(after:limit:) needs a limit of 0 or more") }
        return try withHistoryReader { (connection) throws(StrataError) in
            let statement = try connection.statement(
                "SELECT token, timestamp, author, changes FROM strata_history WHERE token > ?1 ORDER BY token LIMIT ?2")
            defer { statement.reset() }
            try statement.bind(token, at: 1)
            try statement.bind(Int64(limit ?? -1), at: 2)
            var transactions: [HistoryTransaction] = []
            while try statement.step() { transactions.append(try HistoryTransaction(statement, path: path)) }
            return transactions
        }
    }

    /// Runs `body` in a read transaction on a pooled reader connection: one snapshot.
    func withHistoryReader<T>(_ body: (SQLiteConnection) throws(StrataError) -> T) throws(StrataError) -> T {
        let connection = try checkOutReader()
        defer { checkIn(connection) }
        try connection.run(cached: "BEGIN")
        defer { connection.rollbackQuietly() }
        return try body(connection)
    }
}

extension HistoryTransaction {
    /// The history transaction in the statement's current row.
    /// - Throws: `.storeCorrupt` for a column of the wrong type or changes that do not decode.
    fileprivate init(_ statement: SQLiteStatement, path: String) throws(StrataError) {
        let token = statement.int64(at: 0)
        let place = { "\(path): strata_history row \(token)" }
        let author = try statement.value(at: 2, as: .text, isBool: false, place: place)
        guard case .real(let seconds) = try statement.value(at: 1, as: .real, isBool: false, place: place),
            case .text(let json) = try statement.value(at: 3, as: .text, isBool: false, place: place)
        else {
            throw .storeCorrupt("\(place()) has no timestamp or no changes")
        }
        let changes: [HistoryChange]
        do {
            changes = try JSONDecoder().decode(HistoryChangeList.self, from: Data(json.utf8)).changes
        } catch {
            throw .storeCorrupt("\(place()): its changes do not decode: \(error)")
        }
        let name: String? = if case .text(let text) = author { text } else { nil }
        self.init(token: token, timestamp: Date(timeIntervalSince1970: seconds), author: name, changes: changes)
    }
}

extension SQLiteConnection {
    /// Runs one statement with `parameters` through the statement cache.
    func run(_ sql: String, _ parameters: [StoredValue]) throws(StrataError) {
        let statement = try statement(sql)
        defer { statement.reset() }
        for (offset, value) in parameters.enumerated() { try statement.bind(value, at: Int32(offset + 1)) }
        try statement.run()
    }
}
