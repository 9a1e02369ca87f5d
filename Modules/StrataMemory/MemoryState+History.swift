import StrataStorage

/// Persistent history on the state: reading after a token, cursors, trimming.
extension MemoryState {
    /// The transactions after `token`, oldest first, at most `limit`.
    /// - Throws: `.misuse` for a negative limit.
    func history(after token: Int64, limit: Int?) throws(StrataError) -> [HistoryTransaction] {
        if let limit, limit < 0 { throw .misuse("a history read's limit must be 0 or more, got \(limit)") }
        // Tokens ascend: binary search for the first one after `token`.
        var low = 0
        var high = history.count
        while low < high {
            let middle = (low + high) / 2
            if history[middle].token <= token { low = middle + 1 } else { high = middle }
        }
        let end = limit.map { min(history.count, low + min($0, history.count - low)) } ?? history.count
        return Array(history[low..<end])
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
        history.removeAll { $0.token < bound }
        return bound
    }
}
