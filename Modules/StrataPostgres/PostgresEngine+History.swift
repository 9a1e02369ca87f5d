import Foundation
import StrataStorage

/// Persistent history (design notes §10): `strata_history` (token, timestamp as seconds since
/// 1970, author, changes as JSON), tokens from the one-row `strata_history_clock`, whose row lock
/// orders tokens by commit; named cursors in `strata_history_cursors`. Each append notifies the
/// channel `strata.<schema>` with its token; observers wait on it (``PostgresNotifications``, D8)
/// and poll ``currentHistoryToken()`` while it is down.
extension PostgresEngine: HistoryStore {
    /// Appends `record` as the next history transaction inside the commit's transaction.
    func appendHistory(_ record: HistoryRecord, session: PostgresSession) throws(StrataError) {
        let append = try historyAppend(record)
        let result: PGResult
        do throws(PGFailure) {
            result = try session.runRaw(append.sql, append.parameters())
        } catch {
            throw historyFailure(error, sql: append.sql, session: session)
        }
        try checkHistoryAppended(result)
    }

    /// The statement that appends `record`, for a commit that sends it in the round trip of its
    /// `COMMIT` (``commitIdentified(_:appending:)``, before the commit's identity and the
    /// `COMMIT`). One statement: the clock's next token (its row lock orders tokens by commit, and
    /// is held only while the server runs this statement and the two after it), the row, and the
    /// notification of the store's listeners (delivered when the transaction commits;
    /// PostgresNotifications). A spent clock, or a missing clock row, gives no token, and
    /// inserting none fails (SQLSTATE 23502, a NULL token), so the server skips the `COMMIT` that
    /// follows; ``historyFailure(_:sql:session:)`` reports it. The record is encoded now; the
    /// parameters, with the commit's timestamp, when they are made (as the statement is sent).
    /// - Throws: `.misuse` when the record does not encode as JSON.
    func historyAppend(_ record: HistoryRecord) throws(StrataError) -> (sql: String, parameters: () -> [PGParameter]) {
        let json: String
        do {
            json = String(decoding: try HistoryJSON.encode(record), as: UTF8.self)
        } catch {
            throw .misuse("the history of this change set does not encode as JSON: \(error)")
        }
        let sql = """
            WITH clock AS (UPDATE \(names.historyClock) SET last_token = last_token + 1 \
            WHERE id = 1 AND last_token < $1 RETURNING last_token) \
            INSERT INTO \(names.history) (token, "timestamp", author, changes) \
            SELECT next.token, $2, $3, $4 FROM (SELECT (SELECT last_token FROM clock) AS token) AS next \
            CROSS JOIN LATERAL (SELECT pg_notify($5, next.token::text)) AS notified \
            RETURNING token
            """
        let author = record.author.map(PGParameter.text) ?? .null(oid: PGParameter.textOID)
        let channel = notifications.channel
        return (
            sql,
            {
                [.int8(Int64.max), .float8(Date().timeIntervalSince1970), author, .text(json), .text(channel)]
            }
        )
    }

    /// Checks the result of ``historyAppend(_:)``: one token appended.
    /// - Throws: `.storeFull` when no row was appended.
    func checkHistoryAppended(_ result: PGResult) throws(StrataError) {
        guard result.rowCount == 1, result.int64(0, 0) != nil else { throw historyClockSpent }
    }

    /// The error of a failed ``historyAppend(_:)``: `.storeFull` for a clock that gave no token
    /// (SQLSTATE 23502), else the server's error with the statement's SQL.
    func historyFailure(_ failure: PGFailure, sql: String, session: PostgresSession) -> StrataError {
        failure.sqlState == "23502" ? historyClockSpent : session.error(failure, sql: sql)
    }

    /// A history clock that gives no more tokens: spent, or its row deleted.
    private var historyClockSpent: StrataError {
        .storeFull(
            """
            \(location): the history clock gave no token, so nothing was written: its row in \
            \(names.historyClock) is missing (insert it again: id 1, last_token the highest token in \
            \(names.history)), or it has used every token up to \(Int64.max) (the store needs a new history: copy \
            its rows into a new store)
            """)
    }

    func currentHistoryToken() throws -> Int64 {
        guard !pool.isClosed else {
            throw PostgresError.closed(location)
        }
        return try withSession { (session) throws(StrataError) -> Int64 in
            guard let token = try session.int64("SELECT last_token FROM \(names.historyClock) WHERE id = 1") else {
                throw .storeCorrupt("\(location): strata_history_clock has no row")
            }
            return token
        }
    }

    func history(after token: Int64, limit: Int?) throws -> [HistoryTransaction] {
        if let limit, limit < 0 { throw StrataError.misuse("history(after:limit:) needs a limit of 0 or more") }
        return try withSession { (session) throws(StrataError) -> [HistoryTransaction] in
            let result = try session.run(
                """
                SELECT token, \"timestamp\", author, changes FROM \(names.history) WHERE token > $1 ORDER BY token \
                LIMIT $2
                """,
                [.int8(token), limit.map { .int8(Int64($0)) } ?? .null(oid: PGParameter.int8OID)])
            var transactions: [HistoryTransaction] = []
            transactions.reserveCapacity(result.rowCount)
            for row in 0..<result.rowCount {
                guard let token = result.int64(row, 0), let seconds = result.double(row, 1),
                    let json = result.text(row, 3)
                else { throw .storeCorrupt("\(location): a strata_history row has no token, timestamp or changes") }
                let changes: [HistoryChange]
                do {
                    changes = try JSONDecoder().decode(HistoryChangeList.self, from: Data(json.utf8)).changes
                } catch {
                    throw .storeCorrupt("\(location): strata_history row \(token): its changes do not decode: \(error)")
                }
                transactions.append(
                    HistoryTransaction(
                        token: token, timestamp: Date(timeIntervalSince1970: seconds), author: result.text(row, 2),
                        changes: changes))
            }
            return transactions
        }
    }

    func historyCursors() throws -> [String: Int64] {
        try withSession { (session) throws(StrataError) -> [String: Int64] in
            let result = try session.run("SELECT name, token FROM \(names.historyCursors)")
            var cursors: [String: Int64] = [:]
            for row in 0..<result.rowCount {
                guard let name = result.text(row, 0), let token = result.int64(row, 1) else {
                    throw .storeCorrupt("\(location): strata_history_cursors holds a row without a name or token")
                }
                cursors[name] = token
            }
            return cursors
        }
    }

    func setHistoryCursor(_ name: String, to token: Int64?) throws {
        try HistoryCursor.check(name, token: token)
        try withHistoryWrite { (session) throws(StrataError) in
            if let token {
                try session.run(
                    """
                    INSERT INTO \(names.historyCursors) (name, token) VALUES ($1, $2) \
                    ON CONFLICT (name) DO UPDATE SET token = excluded.token
                    """, [.text(name), .int8(token)])
            } else {
                try session.run("DELETE FROM \(names.historyCursors) WHERE name = $1", [.text(name)])
            }
        }
    }

    @discardableResult
    func deleteHistory(before token: Int64, force: Bool) throws -> Int64 {
        try withHistoryWrite { (session) throws(StrataError) -> Int64 in
            let slowest: Int64? = force ? nil : try session.int64("SELECT min(token) FROM \(names.historyCursors)")
            guard let last = try session.int64("SELECT last_token FROM \(names.historyClock) WHERE id = 1") else {
                throw .storeCorrupt("\(location): strata_history_clock has no row")
            }
            let next = last.addingReportingOverflow(1)
            let bound = HistoryCursor.trimmingBound(
                next.overflow ? token : min(token, next.partialValue), force: force, slowestCursor: slowest)
            try session.run("DELETE FROM \(names.history) WHERE token < $1", [.int8(bound)])
            return bound
        }
    }

    /// A transaction holding the store's history advisory lock: cursor moves and trims serialise.
    @discardableResult
    private func withHistoryWrite<T>(_ body: (PostgresSession) throws(StrataError) -> T) throws(StrataError) -> T {
        guard !pool.isClosed else { throw PostgresError.closed(location) }
        return try withTransaction { (session) throws(StrataError) -> T in
            try session.run(
                "SELECT pg_advisory_xact_lock($1::int4, hashtext($2))",
                [.int8(Self.historyLockClass), .rawText(pool.settings.schema)])
            return try body(session)
        }
    }
}
