import Strata

extension ObjectContext {
    /// `aggregate(request, groupedBy: groups, functions)`, or nil when one of its integer sums adds
    /// up to more than `Int64` holds: the aggregate reports that, and only that, as `.validation`
    /// (the engines sum exactly, so only a total past `Int64` fails, never a running sum). Call
    /// inside `perform`.
    func aggregateInRange(
        _ request: FetchRequest<Transaction>, groupedBy groups: [any PartialKeyPath<Transaction> & Sendable] = [],
        _ functions: [Aggregate<Transaction>]
    ) throws -> [AggregateResult]? {
        do {
            return try aggregate(request, groupedBy: groups, functions)
        } catch StrataError.validation {
            return nil
        }
    }

    /// The group values of the first group of `request`'s transactions, grouped by `groups`,
    /// whose amounts add up to more than `Int64` holds; nil when no group's does. Each group's
    /// sum is read alone, over the transactions `narrowed` selects for its values (nil skips
    /// the group). For the message of a sum that failed; call inside `perform`.
    func groupSummingPastRange(
        _ request: FetchRequest<Transaction>, groupedBy groups: [any PartialKeyPath<Transaction> & Sendable],
        narrowed: ([AggregateValue]) -> FetchRequest<Transaction>?
    ) throws -> [AggregateValue]? {
        for group in try aggregate(request, groupedBy: groups, [.count]) {
            guard let alone = narrowed(group.group) else { continue }
            if try aggregateInRange(alone, [.sum(\.amount)]) == nil { return group.group }
        }
        return nil
    }
}
