public import Foundation

/// The engine-neutral filter form that the core compiles `Predicate`s into.
///
/// Engines translate a `Filter` to their own query form (SQL, index scans) or evaluate it
/// with ``Filter/matches(_:key:)``, which is the reference semantics. Logic is two-valued:
/// every leaf is true or false, never unknown.
///
/// - `compare(c, .equal, v)` is false when column `c` is null; `.notEqual` is true then.
/// - Ordering comparisons (`<`, `<=`, `>`, `>=`), `contains`, `hasPrefix` and `isIn` are false
///   when the column is null.
/// - A NaN column value (only an unsaved object can hold one) is unordered, as in Swift: only
///   `.notEqual` is true.
/// - Texts compare by UTF-8 bytes (Unicode scalar order); `contains` and `hasPrefix` match bytes.
/// - Comparison values are never `.null`; nil checks use `isNull` / `isNotNull`.
///
/// ```swift
/// // balance > 100 AND name starts with "Ch"
/// let filter = Filter.and([.compare(column: 2, .greaterThan, .integer(100)), .hasPrefix(column: 0, prefix: "Ch")])
/// ```
public indirect enum Filter: Sendable, Hashable {
    /// Always true or always false, whatever the row (what an empty `isIn` or a folded
    /// predicate becomes).
    case constant(Bool)
    /// The column compares with a non-null value; false when the column is null, except for
    /// `.notEqual`, which is true then.
    case compare(column: Int, ComparisonOperator, StoredValue)
    /// The column is null.
    case isNull(column: Int)
    /// The column is not null.
    case isNotNull(column: Int)
    /// The text column contains `substring` (binary match). An empty substring matches every non-null text.
    case contains(column: Int, substring: String)
    /// The text column starts with `prefix` (binary match).
    case hasPrefix(column: Int, prefix: String)
    /// The column equals one of `values` (non-null values of the column's storage class).
    case isIn(column: Int, values: [StoredValue])
    /// The row's primary key compares with `key`.
    case primaryKey(ComparisonOperator, Int64)
    /// Every filter holds (true when the list is empty).
    case and([Filter])
    /// At least one filter holds (false when the list is empty).
    case or([Filter])
    /// The filter does not hold (two-valued: the negation of a leaf that is false on null is
    /// true on null).
    case not(Filter)
}

/// The comparison a ``Filter/compare(column:_:_:)`` leaf makes.
public enum ComparisonOperator: String, Sendable, Hashable, CaseIterable {
    /// `==`: the values are equal.
    case equal = "=="
    /// `!=`: the values differ (true when the column is null).
    case notEqual = "!="
    /// `<`: the column orders before the value.
    case lessThan = "<"
    /// `<=`: the column orders before or equal to the value.
    case lessThanOrEqual = "<="
    /// `>`: the column orders after the value.
    case greaterThan = ">"
    /// `>=`: the column orders after or equal to the value.
    case greaterThanOrEqual = ">="

    /// Applies the operator to an ordering result.
    @inlinable public func holds(for order: ComparisonResult) -> Bool {
        switch self {
        case .equal: order == .orderedSame
        case .notEqual: order != .orderedSame
        case .lessThan: order == .orderedAscending
        case .lessThanOrEqual: order != .orderedDescending
        case .greaterThan: order == .orderedDescending
        case .greaterThanOrEqual: order != .orderedAscending
        }
    }
}

/// One sort key; engines append the primary key (ascending) as the final tie-breaker.
public struct SortKey: Sendable, Hashable {
    /// The column to sort by.
    public var column: Int
    /// Ascending (nil first) or descending (nil last).
    public var ascending: Bool

    /// A sort key.
    public init(column: Int, ascending: Bool) {
        self.column = column
        self.ascending = ascending
    }
}

/// A complete read request for one entity.
///
/// Engines return the rows matching ``filter``, ordered by ``sort`` then primary key
/// ascending, skipping ``offset`` rows and returning at most ``limit``.
public struct FetchPlan: Sendable, Hashable {
    /// The entity number.
    public var entity: Int
    /// Which rows; nil for all.
    public var filter: Filter?
    /// The order before the primary-key tie-breaker.
    public var sort: [SortKey]
    /// At most this many rows; nil for all.
    public var limit: Int?
    /// Rows to skip first.
    public var offset: Int
    /// Whether the rows must come in primary-key order (the default). False lets a plan with no
    /// sort, limit or offset deliver its rows in any order, for a reader that orders or buckets
    /// them itself (a batch fault's `fk IN keys`): engines then skip sorting by primary key.
    /// Ignored when the plan has a sort, a limit or an offset.
    public var inKeyOrder: Bool

    /// A plan for one entity.
    ///
    /// ```swift
    /// // The rows of many owners, in whatever order the index gives them.
    /// let owners: [StoredValue] = [.integer(1), .integer(2)]
    /// let plan = FetchPlan(entity: 1, filter: .isIn(column: 2, values: owners), inKeyOrder: false)
    /// ```
    public init(
        entity: Int, filter: Filter? = nil, sort: [SortKey] = [], limit: Int? = nil, offset: Int = 0,
        inKeyOrder: Bool = true
    ) {
        self.entity = entity
        self.filter = filter
        self.sort = sort
        self.limit = limit
        self.offset = offset
        self.inKeyOrder = inKeyOrder
    }

    /// Whether the engine may deliver the rows in any order: ``inKeyOrder`` is false and the plan
    /// has no sort, limit or offset.
    public var allowsAnyOrder: Bool { !inKeyOrder && sort.isEmpty && limit == nil && offset <= 0 }
}
