import StrataStorage

/// Runs `strata verify`: the engine's own integrity check, then Strata's checks on the store
/// opened from its recorded schema (``StoreChecks``).
enum StoreVerifier {
    /// The checks, in the order they run.
    static let checkNames = [
        "engine integrity", "rows decode", "references name existing rows", "many-to-many links agree",
        "unique indexes hold", "history is consistent",
    ]

    /// Verifies the store `inspection` reaches.
    /// - Throws: ``ToolError/missingStore(_:)``, ``ToolError/notAStrataStore(_:)``,
    ///   ``ToolError/loginRefused(_:)`` and other errors that leave nothing to verify; every problem
    ///   of the store itself is in the report instead.
    static func verify(_ inspection: StoreInspection) throws(ToolError) -> VerifyReport {
        _ = try OpenedStore.readRecord(inspection)
        var problems: [String] = []
        do {
            problems += try inspection.integrityProblems().map { "engine integrity check: \($0)" }
        } catch {
            problems.append("engine integrity check failed: \(ToolError.oneLine(String(describing: error)))")
        }
        let store: OpenedStore
        do {
            store = try OpenedStore(inspection)
        } catch {
            if case .loginRefused = error { throw error }
            problems.append("the store does not open: \(ToolError.oneLine(error.message))")
            return VerifyReport(
                engine: inspection.engineName, location: inspection.location, checks: checkNames, problems: problems)
        }
        problems += StoreChecks(store).run()
        return VerifyReport(
            engine: inspection.engineName, location: inspection.location, checks: checkNames, problems: problems)
    }
}
