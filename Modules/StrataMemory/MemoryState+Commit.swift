import Foundation
import StrataStorage

extension MemoryState {
    /// Commits `changes` into this state, or throws and leaves it exactly as it was: result
    /// guards and verifies, the row writes in the contract's order, cursor moves, then set writes,
    /// then the history (when the change set writes data or its set writes changed rows).
    /// - Parameter setWrites: whether set writes may run (a migration stage's engine refuses them).
    /// - Returns: one result per set write.
    /// - Throws: `.conflict` listing every version, guard and cursor conflict; else the first
    ///   unique clash (`.constraintViolation`); `.misuse` for a change set that does not fit the
    ///   schema; the set writes' errors (`.validation`, `.constraintViolation`, `.conflict`).
    mutating func commit(_ changes: ChangeSet, setWrites: Bool = true) throws(StrataError) -> [SetWriteResult] {
        if setWrites {
            try changes.checkSetWrites(against: schema)
        } else {
            try changes.refuseSetWrites("a migration stage's engine")
        }
        try changes.checkCursorMoves()
        var writer = MemoryRowWriter(state: self)
        writer.conflicts = try guardConflicts(changes.resultGuards)
        try writer.apply(changes)
        var cursorConflicts: [VersionConflict] = []
        for move in changes.cursorMoves {
            if let conflict = move.conflict(stored: cursors[move.name], store: identifier) {
                cursorConflicts.append(conflict)
            }
        }
        if !writer.conflicts.isEmpty || !cursorConflicts.isEmpty {
            throw .conflict(writer.conflicts + cursorConflicts)
        }
        if let violation = writer.violation { throw violation }
        var working = writer.state
        for move in changes.cursorMoves { working.cursors[move.name] = move.token }
        var results: [SetWriteResult] = []
        if changes.setWrites.isEmpty {
            if let record = changes.historyToAppend { working.appendHistory(record) }
        } else {
            results = try working.runSetWrites(changes.setWrites)
            if let record = changes.historyToAppend(adding: results, schema: working.schema) {
                working.appendHistory(record)
            }
        }
        self = working
        return results
    }

    /// The conflicts of result guards, checked against the state before any write.
    private func guardConflicts(_ guards: [ResultSetGuard]) throws(StrataError) -> [VersionConflict] {
        var conflicts: [VersionConflict] = []
        for guarded in guards {
            let entity = try entity(guarded.entity)
            var found: [Int64: Int64] = [:]
            try MemoryScan(state: self).forEachRow(for: guarded.plan) { found[$0.key] = $0.version }
            var listed = guarded.conflicts(found: found, storeIdentifier: identifier, entityName: entity.name)
            for index in listed.indices where listed[index].storedVersion == nil {
                guard let key = listed[index].objectID.primaryKey else { continue }
                listed[index].storedVersion = tables[guarded.entity].rows[key]?.version
            }
            conflicts += listed
        }
        return conflicts
    }

    /// Appends one history transaction with the next token and the current time.
    mutating func appendHistory(_ record: HistoryRecord) {
        lastToken += 1
        history[lastToken] = HistoryTransaction(
            token: lastToken, timestamp: Date(), author: record.author, changes: record.allChanges)
    }
}
