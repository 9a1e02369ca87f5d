import Foundation
import Strata

/// Which of an import's external ids a purge recorded (``PurgedImport``): the lines the import
/// skips, since their amounts are in their accounts' opening balances already.
struct PurgedImportIDs {
    /// The recorded ids among those asked for.
    private(set) var ids: Set<String> = []

    /// Reads the records of `externalIDs`, and guards them: a purge that records one of them
    /// before this import saves makes the save conflict, and the unit of work re-runs. Call
    /// inside `perform`.
    init(externalIDs: [String], in context: ObjectContext) throws {
        var start = 0
        // In slices, so that no engine meets a list longer than it binds at once.
        while start < externalIDs.count {
            let slice = Array(externalIDs[start..<min(start + 500, externalIDs.count)])
            start += slice.count
            let request = FetchRequest<PurgedImport>(predicate: #Predicate { slice.contains($0.externalID) })
            try context.requireUnchangedResults(of: request)
            ids.formUnion(try context.fetchValues(request, \.externalID))
        }
    }
}
