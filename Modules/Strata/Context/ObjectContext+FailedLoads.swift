import StrataStorage

/// Relationship loads that fail. A relationship is read through a property, which cannot throw,
/// so a load that fails (a damaged row, a lost connection) answers empty, or nil for a to-one,
/// and the context keeps the error to throw where the caller can handle it: the `perform` body
/// ends by throwing it, its result dropped, and every ``save()`` throws it and writes nothing
/// until ``rollback()`` or ``reset()`` discards the changes that may rest on the wrong read.
/// Stopping the process would take the error out of the caller's hands; answering empty alone
/// would hand the caller a wrong result.
extension ObjectContext {
    /// Keeps the first failed load since the last rollback or reset (later ones follow from the
    /// same cause).
    func recordFailedLoad(_ error: any Error) {
        if failedLoad == nil { failedLoad = error }
    }

    /// Throws the failed load kept since the last rollback or reset, if there is one.
    func throwFailedLoad() throws {
        if let failedLoad { throw failedLoad }
    }
}
