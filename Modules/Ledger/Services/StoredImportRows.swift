import Foundation
import Strata

/// The stored transactions that have one of an import's external ids, read as values (no
/// transaction objects): each one's ID, account, source line, amount and date.
struct StoredImportRows {
    struct Row {
        var id: ObjectID
        var account: ObjectID?
        var source: ObjectID?
        var amount: Int64
        var date: Date
    }

    /// By external id.
    var rows: [String: Row] = [:]

    /// The requests that select them, in slices (no engine meets a longer list than it binds).
    var requests: [FetchRequest<Transaction>] = []

    /// Call inside `perform`.
    init(externalIDs: [String], in context: ObjectContext) throws {
        for ids in ExternalIDSlices.of(externalIDs) {
            let slice = ids.map { Optional($0) }
            // Sorted by the unique external id, so that both reads list the rows in one order.
            let request = FetchRequest<Transaction>(
                predicate: #Predicate { slice.contains($0.externalID) }, sortBy: [SortDescriptor(\.externalID)])
            requests.append(request)
            let ids = try context.fetchObjectIDs(request)
            let values = try context.fetchValues(request, \.externalID, \.amount, \.date)
            var links: [String: (account: ObjectID?, source: ObjectID?)] = [:]
            for group in try context.aggregate(request, groupedBy: [\.externalID, \.account, \.source], [.count]) {
                if let id = group.group[0].string { links[id] = (group.group[1].objectID, group.group[2].objectID) }
            }
            for (id, value) in zip(ids, values) {
                guard let externalID = value.0 else { continue }
                rows[externalID] = Row(
                    id: id, account: links[externalID]?.account, source: links[externalID]?.source, amount: value.1,
                    date: value.2)
            }
        }
    }
}
