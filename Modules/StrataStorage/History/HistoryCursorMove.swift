public import Foundation

/// A named history cursor moved in the same commit as a consumer's own writes
/// (``ChangeSet/cursorMoves``): a compare-and-set, so data and cursor move together or not at all,
/// and two consumers of one cursor cannot both process a commit.
///
/// An engine that keeps history (``HistoryStore``) applies it in the commit's own transaction: when
/// the stored cursor `name` holds ``expectedToken`` (no cursor when nil), it stores ``token``;
/// otherwise nothing of the change set is written and the commit throws
/// ``StrataError/conflict(_:)`` with a ``VersionConflict`` whose
/// ``VersionConflict/historyCursor`` names the cursor (with the row conflicts, if any).
///
/// ```swift
/// var changes = ChangeSet()
/// changes.inserts = [RowWrite(entity: 0, key: 9, expectedVersion: 0, values: processed)]
/// changes.cursorMoves = [HistoryCursorMove(name: "mailer", expectedToken: 41, token: 42)]
/// try engine.commit(changes)  // the row and the cursor, or .conflict and neither
/// ```
public struct HistoryCursorMove: Sendable, Hashable {
    /// The cursor's name (``HistoryCursor/check(_:token:)`` rules).
    public var name: String
    /// The token the consumer read from the cursor; nil when the cursor must not exist yet.
    public var expectedToken: Int64?
    /// The token to store: the last transaction the consumer has now processed.
    public var token: Int64

    /// A move of `name` from `expectedToken` to `token`.
    public init(name: String, expectedToken: Int64?, token: Int64) {
        self.name = name
        self.expectedToken = expectedToken
        self.token = token
    }

    /// Checks the move before anything is written: a valid name, tokens of 0 or more, and no move
    /// backwards (a consumer only moves forward; rewinding is ``HistoryStore/setHistoryCursor(_:to:)``'s).
    /// - Throws: `.misuse` for a bad name or token, or a `token` below ``expectedToken``.
    public func check() throws(StrataError) {
        try HistoryCursor.check(name, token: token)
        try HistoryCursor.check(name, token: expectedToken)
        if let expectedToken, token < expectedToken {
            throw .misuse(
                """
                history cursor \(String(reflecting: name)) cannot move back from token \(expectedToken) to \(token) \
                in a save: a consumer moves its cursor forward only; rewind it with setHistoryCursor
                """)
        }
    }

    /// The conflict to report when the stored cursor holds `stored` (nil: no cursor) instead of
    /// ``expectedToken``; nil when it holds the expected token.
    public func conflict(stored: Int64?, store: UUID) -> VersionConflict? {
        guard stored != expectedToken else { return nil }
        return VersionConflict(historyCursor: name, in: store, expectedToken: expectedToken, storedToken: stored)
    }
}

extension ChangeSet {
    /// Checks every cursor move (``HistoryCursorMove/check()``) and that no cursor moves twice.
    /// - Throws: `.misuse`.
    public func checkCursorMoves() throws(StrataError) {
        var names = Set<String>()
        for move in cursorMoves {
            try move.check()
            guard names.insert(move.name).inserted else {
                throw .misuse(
                    "history cursor \(String(reflecting: move.name)) is moved twice in one change set; move it once")
            }
        }
    }
}
