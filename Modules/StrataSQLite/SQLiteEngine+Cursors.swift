import Foundation
import StrataStorage

/// History cursors moved by a commit (``ChangeSet/cursorMoves``): compare-and-set on
/// `strata_history_cursors`, inside the commit's `BEGIN IMMEDIATE`, so the move is serialised with
/// every other write of the store and lands exactly when the commit's data does.
extension SQLiteEngine {
    /// Checks and applies `changes`' cursor moves in the write transaction open on `connection`;
    /// returns a conflict per cursor not at its expected token (those are not moved; the caller
    /// rolls back).
    /// - Throws: `.misuse` for a bad move (``ChangeSet/checkCursorMoves()``); SQLite's errors.
    static func moveHistoryCursors(
        of changes: ChangeSet, store: UUID, in connection: SQLiteConnection
    ) throws(StrataError) -> [VersionConflict] {
        guard !changes.cursorMoves.isEmpty else { return [] }
        try changes.checkCursorMoves()
        var conflicts: [VersionConflict] = []
        for move in changes.cursorMoves {
            let stored = try connection.queryInt64(
                "SELECT token FROM strata_history_cursors WHERE name = ?1", [.text(move.name)])
            if let conflict = move.conflict(stored: stored, store: store) {
                conflicts.append(conflict)
                continue
            }
            try connection.run(
                "INSERT OR REPLACE INTO strata_history_cursors (name, token) VALUES (?1, ?2)",
                [.text(move.name), .integer(move.token)])
        }
        return conflicts
    }
}
