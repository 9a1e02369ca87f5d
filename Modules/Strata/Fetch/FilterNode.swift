import Foundation
import StrataStorage

/// A compiled predicate: engine-neutral filters where the compiler understood the
/// expression, and opaque sub-expressions evaluated in memory where it did not.
indirect enum FilterNode {
    case filter(Filter)
    case and([FilterNode])
    case or([FilterNode])
    case not(FilterNode)
    /// Evaluated by Foundation against the object itself.
    case opaque((PredicateBindings) throws -> Bool)

    /// `lhs && rhs`, with conjunctions among them spliced into one list: a chain of `&&`
    /// compiles to one flat node (and one flat SQL expression), not a tree as deep as the chain.
    static func conjunction(_ lhs: FilterNode, _ rhs: FilterNode) -> FilterNode {
        .and(spliced(lhs, rhs) { if case .and(let parts) = $0 { parts } else { nil } })
    }

    /// `lhs || rhs`, with disjunctions among them spliced into one list (see ``conjunction(_:_:)``).
    static func disjunction(_ lhs: FilterNode, _ rhs: FilterNode) -> FilterNode {
        .or(spliced(lhs, rhs) { if case .or(let parts) = $0 { parts } else { nil } })
    }

    /// The parts of `lhs` and `rhs`, each replaced by its own parts when `parts` gives them.
    private static func spliced(
        _ lhs: FilterNode, _ rhs: FilterNode, _ parts: (FilterNode) -> [FilterNode]?
    ) -> [FilterNode] {
        (parts(lhs) ?? [lhs]) + (parts(rhs) ?? [rhs])
    }

    /// The node as a pure engine filter, when no part is opaque.
    var pureFilter: Filter? {
        switch self {
        case .filter(let filter): return filter
        case .and(let parts):
            let filters = parts.compactMap(\.pureFilter)
            return filters.count == parts.count ? .and(filters) : nil
        case .or(let parts):
            let filters = parts.compactMap(\.pureFilter)
            return filters.count == parts.count ? .or(filters) : nil
        case .not(let inner): return inner.pureFilter.map(Filter.not)
        case .opaque: return nil
        }
    }

    /// The strongest pure filter implied by the node: every row the node accepts passes it.
    var impliedFilter: Filter? {
        if let pure = pureFilter { return pure }
        guard case .and(let parts) = self else { return nil }
        let filters = parts.compactMap(\.impliedFilter)
        return filters.isEmpty ? nil : .and(filters)
    }

    /// Evaluates the node against an object's current values, its to-one links read as they
    /// stand now (``ManagedObject/valuesWithPendingLinks()``, worked out once for the whole node).
    func matches(_ object: ManagedObject, bindings: PredicateBindings) throws -> Bool {
        if let pending = object.valuesWithPendingLinks() {
            return try matches(pending, key: object.key, bindings: bindings)
        }
        return try matches(object.values, key: object.key, bindings: bindings)
    }

    private func matches(
        _ values: some RandomAccessCollection<StoredValue>, key: Int64, bindings: PredicateBindings
    ) throws -> Bool {
        switch self {
        case .filter(let filter): return filter.matches(values, key: key)
        case .and(let parts):
            for part in parts where try !part.matches(values, key: key, bindings: bindings) { return false }
            return true
        case .or(let parts):
            for part in parts where try part.matches(values, key: key, bindings: bindings) { return true }
            return false
        case .not(let inner): return try !inner.matches(values, key: key, bindings: bindings)
        case .opaque(let evaluate): return try evaluate(bindings)
        }
    }
}
