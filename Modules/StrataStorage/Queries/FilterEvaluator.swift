import Foundation

/// A ``Filter`` prepared once for testing many rows: the same answer as
/// ``Filter/matches(_:key:)`` for every row, faster when the filter holds membership leaves.
///
/// `Filter.matches` compares a row with each constant of an ``Filter/isIn(column:values:)``
/// leaf in turn, so a scan costs rows × constants. The evaluator puts each leaf's constants
/// into hashed sets once (texts by their UTF-8 bytes, integers and reals by numeric value, as
/// the reference compares them), so each row costs one or two lookups. Every other leaf is
/// evaluated by `Filter.matches` itself. Engines that scan and test rows in memory make one
/// evaluator per scan; it is a value, `Sendable`, and may be kept and shared between threads.
///
/// ```swift
/// let evaluator = FilterEvaluator(filter)
/// for row in rows where evaluator.matches(row.values, key: row.key) {
///     selected.append(row)
/// }
/// ```
///
/// Making one and calling it never throws: a filter that names a column the row does not have
/// is a caller's error, checked before the scan (as ``Filter/matches(_:key:)`` requires).
public struct FilterEvaluator: Sendable {
    /// The filter this evaluator answers for.
    public let filter: Filter
    private let root: Node

    /// The filter tree with its membership leaves replaced by their sets.
    private indirect enum Node: Sendable {
        /// A subtree without membership leaves, evaluated by the reference.
        case reference(Filter)
        case member(column: Int, MembershipSet)
        case and([Node])
        case or([Node])
        case not(Node)

        var isReference: Bool {
            if case .reference = self { return true }
            return false
        }
    }

    /// Prepares `filter`; the cost is one pass over its membership constants.
    ///
    /// ```swift
    /// let evaluator = FilterEvaluator(.isIn(column: 0, values: [.integer(1), .integer(4)]))
    /// ```
    public init(_ filter: Filter) {
        self.filter = filter
        root = Self.prepare(filter)
    }

    /// Whether the row passes the filter: exactly ``Filter/matches(_:key:)``.
    /// - Parameters:
    ///   - values: the row's column values, in ``EntitySchema/columns`` order.
    ///   - key: the row's primary key, for ``Filter/primaryKey(_:_:)`` leaves.
    /// - Returns: true when the row is selected.
    public func matches(_ values: some RandomAccessCollection<StoredValue>, key: Int64) -> Bool {
        Self.evaluate(root, values, key)
    }

    private static func prepare(_ filter: Filter) -> Node {
        switch filter {
        case .isIn(let column, let values):
            return .member(column: column, MembershipSet(values))
        case .and(let parts):
            let nodes = parts.map(prepare)
            return nodes.allSatisfy(\.isReference) ? .reference(filter) : .and(nodes)
        case .or(let parts):
            let nodes = parts.map(prepare)
            return nodes.allSatisfy(\.isReference) ? .reference(filter) : .or(nodes)
        case .not(let inner):
            let node = prepare(inner)
            return node.isReference ? .reference(filter) : .not(node)
        case .constant, .compare, .isNull, .isNotNull, .contains, .hasPrefix, .primaryKey:
            return .reference(filter)
        }
    }

    private static func evaluate(_ node: Node, _ values: some RandomAccessCollection<StoredValue>, _ key: Int64) -> Bool
    {
        switch node {
        case .reference(let filter):
            return filter.matches(values, key: key)
        case .member(let column, let set):
            return set.contains(values[values.index(values.startIndex, offsetBy: column)])
        case .and(let parts):
            return parts.allSatisfy { evaluate($0, values, key) }
        case .or(let parts):
            return parts.contains { evaluate($0, values, key) }
        case .not(let inner):
            return !evaluate(inner, values, key)
        }
    }
}
