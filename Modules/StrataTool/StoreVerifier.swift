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
    ///   ``ToolError/loginRefused(_:)``, ``ToolError/storeUnreachable(_:)`` (the store does not open
    ///   for an I/O or permission reason) and other errors that leave nothing to verify; every
    ///   problem of the store itself is in the report instead.
    static func verify(_ inspection: StoreInspection) throws(ToolError) -> VerifyReport {
        // The file's structure first, without the engine (LMDB trusts its pages: reading a damaged
        // one through it stops the process). A store whose structure is damaged is read no further.
        let structural = try OpenedStore.structuralProblems(inspection)
        if !structural.isEmpty {
            let problems =
                structural.map { "page structure: \($0)" } + [
                    "the other checks were not run: reading a damaged file through the engine could stop the process"
                ]
            return VerifyReport(
                engine: inspection.engineName, location: inspection.location, checks: checkNames, problems: problems)
        }
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
            // Only damage makes a store unsound: a store this process cannot reach or write (a
            // read-only file, a lock held too long) is the tool's failure, as for `inspect`.
            switch error {
            case .loginRefused, .storeUnreachable: throw error
            default: break
            }
            problems.append("the store does not open: \(ToolError.oneLine(error.message))")
            return VerifyReport(
                engine: inspection.engineName, location: inspection.location, checks: checkNames, problems: problems)
        }
        if (try? UnfinishedCopy.isMarked(store.engine)) == true {
            problems.append(
                """
                this store is the target of a `strata copy` that has not finished (history cursor \
                \(UnfinishedCopy.marker)), so it holds only part of the source's rows: delete it and run the \
                copy again
                """)
        }
        problems += StoreChecks(store).run()
        return VerifyReport(
            engine: inspection.engineName, location: inspection.location, checks: checkNames, problems: problems)
    }
}
