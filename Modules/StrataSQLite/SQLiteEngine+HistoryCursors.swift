import StrataStorage

/// Named history cursors and trimming against them: the `strata_history_cursors` table
/// (`name TEXT PRIMARY KEY, token INTEGER NOT NULL`), created with `strata_history`
/// (``prepareHistory(_:)``). Writes go through the writer connection in `BEGIN IMMEDIATE`, with
/// the commit's busy handling, so every connection and process sees one order of cursor moves
/// and trims.
extension SQLiteEngine {
    func historyCursors() throws -> [String: Int64] {
        try withHistoryReader { (connection) throws(StrataError) in
            let statement = try connection.statement("SELECT name, token FROM strata_history_cursors")
            defer { statement.reset() }
            var cursors: [String: Int64] = [:]
            while try statement.step() {
                let place = { "\(connection.path): strata_history_cursors" }
                guard case .text(let name) = try statement.value(at: 0, as: .text, isBool: false, place: place),
                    case .integer(let token) = try statement.value(at: 1, as: .integer, isBool: false, place: place)
                else {
                    throw .storeCorrupt(
                        "\(connection.path): strata_history_cursors holds a row without a name or token")
                }
                cursors[name] = token
            }
            return cursors
        }
    }

    func setHistoryCursor(_ name: String, to token: Int64?) throws {
        try HistoryCursor.check(name, token: token)
        try withHistoryWrite { (connection) throws(StrataError) in
            if let token {
                try connection.run(
                    "INSERT OR REPLACE INTO strata_history_cursors (name, token) VALUES (?1, ?2)",
                    [.text(name), .integer(token)])
            } else {
                try connection.run("DELETE FROM strata_history_cursors WHERE name = ?1", [.text(name)])
            }
        }
    }

    @discardableResult
    func deleteHistory(before token: Int64, force: Bool) throws -> Int64 {
        try withHistoryWrite { (connection) throws(StrataError) in
            let slowest: Int64? =
                if force { nil } else { try connection.queryInt64("SELECT min(token) FROM strata_history_cursors") }
            // Never past the next commit's token: the history starts there, not at a far-off bound.
            let next = try Self.lastHistoryToken(connection).addingReportingOverflow(1)
            let bound = HistoryCursor.trimmingBound(
                next.overflow ? token : min(token, next.partialValue), force: force, slowestCursor: slowest)
            try connection.run("DELETE FROM strata_history WHERE token < ?1", [.integer(bound)])
            return bound
        }
    }

    /// Runs `body` in a `BEGIN IMMEDIATE … COMMIT` on the writer connection, rolled back when it throws.
    private func withHistoryWrite<T>(_ body: (SQLiteConnection) throws(StrataError) -> T) throws(StrataError) -> T {
        try withWriter { (connection) throws(StrataError) in
            try connection.execute("BEGIN IMMEDIATE")
            do throws(StrataError) {
                let value = try body(connection)
                try connection.execute("COMMIT")
                return value
            } catch {
                connection.rollbackQuietly()
                throw error
            }
        }
    }
}
