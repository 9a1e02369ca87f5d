import StrataStorage

/// Persistent history on the state: reading after a token, cursors, trimming.
extension MemoryState {
    /// The transactions after `token`, oldest first, at most `limit`.
    /// - Throws: `.misuse` for a negative limit.
    func history(after token: Int64, limit: Int?) throws(StrataError) -> [HistoryTransaction] {
        if let limit, limit < 0 { throw .misuse("a history read's limit must be 0 or more, got \(limit)") }
        var found: [HistoryTransaction] = []
        guard limit != 0 else { return found }
        history.forEach(from: .init(key: token, inclusive: false), to: nil) { _, transaction in
            found.append(transaction)
            return limit.map { found.count < $0 } ?? true
        }
        return found
    }

    /// Registers, moves or (with nil) removes the cursor `name`.
    /// - Throws: `.misuse` for a bad name or a negative token.
    mutating func setCursor(_ name: String, to token: Int64?) throws(StrataError) {
        try HistoryCursor.check(name, token: token)
        cursors[name] = token
    }

    /// Deletes the transactions below the bound ``StrataStorage/HistoryCursor/trimmingBound(_:force:slowestCursor:)``
    /// gives, never past the next commit's token, and returns the bound.
    mutating func deleteHistory(before token: Int64, force: Bool) -> Int64 {
        let next = lastToken == .max ? lastToken : lastToken + 1
        let bound = min(HistoryCursor.trimmingBound(token, force: force, slowestCursor: cursors.values.min()), next)
        var trimmed: [Int64] = []
        history.forEach(from: nil, to: .init(key: bound, inclusive: false)) { token, _ in
            trimmed.append(token)
            return true
        }
        for token in trimmed { history.removeValue(forKey: token) }
        return bound
    }
}
