/// One aggregate an ``AggregatePlan`` computes per group.
///
/// The reference semantics, which every engine follows (``StoreReader/aggregate(_:)``):
/// - ``count`` counts rows; ``countValues(column:)`` counts the rows whose column is not null.
/// - ``sum(column:)`` adds the non-null values: an integer column gives `.integer` (a sum past
///   `Int64` is an error, never a wrapped number), a real column `.real`. A group with no
///   non-null value sums to `0` of the column's class, not null.
/// - ``minimum(column:)`` and ``maximum(column:)`` give the smallest and largest non-null value in
///   ``StoredValue/order(_:_:)`` (texts by UTF-8 bytes), or `.null` when there is none.
/// - ``average(column:)`` gives the mean of the non-null values as `.real`, or `.null` when there
///   is none. Integers are added exactly before the division.
///
/// ```swift
/// let functions: [AggregateFunction] = [.count, .sum(column: 2), .maximum(column: 3)]
/// ```
public enum AggregateFunction: Sendable, Hashable {
    /// The number of rows.
    case count
    /// The number of rows whose column is not null.
    case countValues(column: Int)
    /// The sum of the column's non-null values (0 when there are none).
    case sum(column: Int)
    /// The smallest non-null value, or `.null`.
    case minimum(column: Int)
    /// The largest non-null value, or `.null`.
    case maximum(column: Int)
    /// The mean of the non-null values as a real, or `.null`.
    case average(column: Int)

    /// The column the function reads, or nil for ``count``.
    public var column: Int? {
        switch self {
        case .count: nil
        case .countValues(let column), .sum(let column), .minimum(let column), .maximum(let column),
            .average(let column):
            column
        }
    }
}

/// A set-based read: aggregates over the rows of one entity that match a filter, per group.
///
/// The rows matching ``filter`` (all rows when nil) are grouped by the values of
/// ``groupBy`` (one group in all when it is empty, even over no rows); each group gives one
/// ``AggregateRow``. Groups come in ascending ``StoredValue/order(_:_:)`` of their values, column
/// by column, null first. A null group value is a group of its own.
///
/// ```swift
/// // Sum of column 2 per value of column 1, over the rows where column 3 is not null.
/// let plan = AggregatePlan(
///     entity: 0, filter: .isNotNull(column: 3), groupBy: [1], functions: [.sum(column: 2), .count])
/// ```
public struct AggregatePlan: Sendable, Hashable {
    /// The entity number.
    public var entity: Int
    /// Which rows; nil for all.
    public var filter: Filter?
    /// The columns whose values make a group, in order; empty for one group over every row.
    public var groupBy: [Int]
    /// The aggregates each group gets, in order.
    public var functions: [AggregateFunction]

    /// A plan for one entity.
    public init(entity: Int, filter: Filter? = nil, groupBy: [Int] = [], functions: [AggregateFunction]) {
        self.entity = entity
        self.filter = filter
        self.groupBy = groupBy
        self.functions = functions
    }
}

/// One group of an ``AggregatePlan``'s result.
public struct AggregateRow: Sendable, Hashable {
    /// The group's values, one per ``AggregatePlan/groupBy`` column (empty without grouping).
    public var group: [StoredValue]
    /// The aggregates, one per ``AggregatePlan/functions`` entry.
    public var values: [StoredValue]

    /// A group's result.
    public init(group: [StoredValue], values: [StoredValue]) {
        self.group = group
        self.values = values
    }
}
