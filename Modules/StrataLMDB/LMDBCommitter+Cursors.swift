import StrataStorage

/// History cursors moved by a commit (``ChangeSet/cursorMoves``): compare-and-set on the
/// `cursor.<name>` keys of `strata.meta`, inside the commit's write transaction (LMDB has one
/// writer per store across processes), so the move lands exactly when the commit's data does.
extension LMDBCommitter {
    /// Checks and applies `changes`' cursor moves; a cursor not at its expected token is recorded
    /// in ``conflicts`` and not moved (``apply(_:)`` then throws and the caller aborts).
    /// - Throws: `.misuse` for a bad move (``ChangeSet/checkCursorMoves()``); `.storeCorrupt` for a
    ///   damaged cursor entry; LMDB errors.
    mutating func moveHistoryCursors(of changes: ChangeSet) throws {
        guard !changes.cursorMoves.isEmpty else { return }
        try changes.checkCursorMoves()
        let meta = catalog.meta
        for move in changes.cursorMoves {
            let key = LMDBEngine.cursorPrefix + Array(move.name.utf8)
            let found = try txn.get(meta, key) { bytes -> Int64? in
                bytes.byteCount == 8 ? IndexKeyCodec.readPrimaryKey(bytes) : nil
            }
            if case .some(.none) = found {
                throw StrataError.storeCorrupt(
                    "strata.meta holds a damaged entry for history cursor \(String(reflecting: move.name))")
            }
            if let conflict = move.conflict(stored: found ?? nil, store: storeIdentifier) {
                conflicts.append(conflict)
                continue
            }
            try txn.put(meta, key, IndexKeyCodec.primaryKey(move.token))
        }
    }
}
