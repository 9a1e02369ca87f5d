import StrataStorage

/// History cursors moved by a commit (``ChangeSet/cursorMoves``): compare-and-set on
/// `strata_history_cursors`, inside the commit's transaction. Each move is one conditional
/// statement (`UPDATE … WHERE token = expected`, or an insert that does nothing when the cursor
/// exists); under `READ COMMITTED` a concurrent move of the same cursor holds its row lock, and the
/// condition is checked again on the row it committed, so exactly one of two racing moves applies.
extension PostgresEngine {
    /// Checks and applies `changes`' cursor moves in the transaction open on `session`, in name
    /// order (so two commits lock cursors in one order); returns a conflict per cursor not at its
    /// expected token (the caller rolls back).
    /// - Throws: `.misuse` for a bad move (``ChangeSet/checkCursorMoves()``); the server's errors.
    func moveHistoryCursors(of changes: ChangeSet, session: PostgresSession) throws(StrataError) -> [VersionConflict] {
        guard !changes.cursorMoves.isEmpty else { return [] }
        try changes.checkCursorMoves()
        var conflicts: [VersionConflict] = []
        for move in changes.cursorMoves.sorted(by: { $0.name < $1.name }) {
            let moved: PGResult
            if let expected = move.expectedToken {
                moved = try session.run(
                    "UPDATE \(names.historyCursors) SET token = $3 WHERE name = $1 AND token = $2",
                    [.text(move.name), .int8(expected), .int8(move.token)])
            } else {
                moved = try session.run(
                    "INSERT INTO \(names.historyCursors) (name, token) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING",
                    [.text(move.name), .int8(move.token)])
            }
            if moved.affectedRows == 1 { continue }
            let stored = try session.int64(
                "SELECT token FROM \(names.historyCursors) WHERE name = $1", [.text(move.name)])
            conflicts.append(
                VersionConflict(
                    historyCursor: move.name, in: storeIdentifier, expectedToken: move.expectedToken,
                    storedToken: stored))
        }
        return conflicts
    }
}
