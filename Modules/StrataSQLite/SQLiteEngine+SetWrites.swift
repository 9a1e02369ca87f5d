import StrataStorage

/// SQLite runs set writes itself, inside the commit's `BEGIN IMMEDIATE … COMMIT`
/// (``SQLiteSetWriter``); ``SQLiteEngine/commit(_:)`` runs them too and drops the results. A
/// migration stage's ``SQLiteTransactionEngine`` does not.
extension SQLiteEngine: SetWritingEngine {
    var acceptsSetWrites: Bool { true }

    func commitReturningResults(_ changes: ChangeSet) throws -> [SetWriteResult] {
        try commitChanges(changes)
    }
}
