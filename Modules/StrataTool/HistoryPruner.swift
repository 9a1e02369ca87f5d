import Foundation
import StrataStorage

/// Runs `strata history prune`: deletes the history before a token or a date, stopping at the
/// slowest cursor unless forced, and says what it removed.
enum HistoryPruner {
    /// Where pruning stops: before a token, or before the first transaction at or after a date.
    enum Bound: Equatable {
        case token(Int64)
        case date(Date)

        /// A token (digits) or an ISO 8601 date (`2024-03-01` or `2024-03-01T12:00:00Z`).
        init(parsing text: String) throws(ToolError) {
            if let token = Int64(text) {
                guard token >= 0 else { throw .usage("--before needs a token of 0 or more, not \(text)") }
                self = .token(token)
                return
            }
            let full = ISO8601DateFormatter()
            let day = ISO8601DateFormatter()
            day.formatOptions = [.withFullDate]
            guard let date = full.date(from: text) ?? day.date(from: text) else {
                throw .usage(
                    "--before needs a history token or a date (2024-03-01 or 2024-03-01T12:00:00Z), not \(text)")
            }
            self = .date(date)
        }
    }

    /// What a prune did.
    struct Outcome: Codable, Sendable, Equatable {
        /// How many history transactions were deleted.
        var removed: Int
        /// The bound asked for, as a token.
        var requestedBefore: Int64
        /// The bound the engine used (lower when a cursor held it back).
        var removedBefore: Int64
        /// The oldest token still kept, nil when the history is empty.
        var oldestKept: Int64?
        /// The cursors that held the bound back, when they did.
        var heldBackBy: [String]
        /// The store's current history token: the newest transaction's.
        var currentToken: Int64

        var text: String {
            var lines = [
                "removed \(removed) history transaction\(removed == 1 ? "" : "s") before token \(removedBefore)"
            ]
            if !heldBackBy.isEmpty {
                let many = heldBackBy.count > 1
                lines.append(
                    """
                    kept the history from token \(removedBefore) on (not \(requestedBefore)): cursor\(many ? "s" : "") \
                    \(heldBackBy.joined(separator: ", ")) \(many ? "have" : "has") not processed it; --force removes \
                    it anyway
                    """)
            } else if requestedBefore > currentToken + 1 {
                lines.append(
                    """
                    token \(requestedBefore) is past the newest transaction (token \(currentToken)), so the bound \
                    stopped after it
                    """)
            } else if removedBefore < requestedBefore {
                lines.append("kept the history from token \(removedBefore) on (not \(requestedBefore))")
            }
            lines.append(oldestKept.map { "the history now starts at token \($0)" } ?? "the history is now empty")
            return lines.joined(separator: "\n")
        }
    }

    /// Prunes the store `inspection` reaches.
    static func prune(_ inspection: StoreInspection, before bound: Bound, force: Bool) throws(ToolError) -> Outcome {
        let store = try OpenedStore(inspection)
        do {
            let requested = try token(for: bound, in: store)
            let before = try count(in: store, before: requested)
            let used = try store.engine.deleteHistory(before: requested, force: force)
            // Read after the delete: commits that landed meanwhile moved the newest token on.
            let current = try store.engine.currentHistoryToken()
            let after = try count(in: store, before: requested)
            let cursors = try store.engine.historyCursors()
            // The engine stops at the newest transaction (current + 1) as well as at the slowest
            // cursor: only a bound below both was held back by a cursor.
            let holding =
                used < min(requested, current + 1) ? cursors.filter { $0.value + 1 == used }.keys.sorted() : []
            let oldest = try store.inspection.readHistorySummary().oldestToken
            return Outcome(
                removed: before - after, requestedBefore: requested, removedBefore: used, oldestKept: oldest,
                heldBackBy: holding, currentToken: current)
        } catch {
            throw ToolError.from(error)
        }
    }

    /// The token a bound stands for: a date is the token of the first transaction at or after it
    /// (the current token + 1 when none is).
    private static func token(for bound: Bound, in store: OpenedStore) throws -> Int64 {
        switch bound {
        case .token(let token): return token
        case .date(let date):
            var found: Int64?
            try store.forEachHistoryTransaction { transaction in
                if found == nil, transaction.timestamp >= date { found = transaction.token }
            }
            return try found ?? store.engine.currentHistoryToken() + 1
        }
    }

    /// How many history transactions have a token below `token`.
    private static func count(in store: OpenedStore, before token: Int64) throws -> Int {
        var count = 0
        try store.forEachHistoryTransaction { if $0.token < token { count += 1 } }
        return count
    }
}
