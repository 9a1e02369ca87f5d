import StrataStorage

/// Relationship loads that fail. A relationship is read through a property, which cannot throw,
/// so a load that fails (a damaged row, a lost connection) answers empty, or nil for a to-one,
/// and the context keeps the error to throw where the caller can handle it: every later
/// ``save()`` of the body throws it and writes nothing, and the `perform` body ends by throwing
/// it, its result dropped. Stopping the process would take the error out of the caller's hands;
/// answering empty alone would hand the caller a wrong result.
extension ObjectContext {
    /// Keeps the first failed load of the running body (later ones follow from the same cause).
    func recordFailedLoad(_ error: any Error) {
        if failedLoad == nil { failedLoad = error }
    }

    /// Throws the failed load kept since the running body began, if there is one.
    func throwFailedLoad() throws {
        if let failedLoad { throw failedLoad }
    }
}
