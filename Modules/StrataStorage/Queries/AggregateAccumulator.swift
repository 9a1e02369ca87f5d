import Foundation

/// Folds rows into an ``AggregatePlan``'s groups, one row at a time, in memory bounded by the
/// number of groups: the reference semantics of ``StoreReader/aggregate(_:)``, and the way an
/// engine without a query language (or the default implementation) computes it.
///
/// ```swift
/// var accumulator = AggregateAccumulator(plan)
/// try reader.forEachRow(for: FetchPlan(entity: plan.entity, filter: plan.filter)) { row in
///     try accumulator.add(row.values)
/// }
/// let result = try accumulator.checkedRows()
/// ```
public struct AggregateAccumulator: Sendable {
    /// The message of the `.validation` issue an integer sum past `Int64` throws (its exact
    /// total, whatever order the rows came in; an average never fails). Its entity and
    /// property name the plan's entity and column numbers; the core names them.
    public static let sumOverflowMessage = "the sum is beyond the range of a 64-bit integer"

    private let plan: AggregatePlan
    /// Each group's values and the offset of its first partial in ``partials``.
    private var groups: [[StoredValue]: Int] = [:]
    /// Every group's partials, one run of `plan.functions.count` per group, updated in place.
    private var partials: [AggregatePartial] = []
    /// The group values of the row being added: reused, so that a row of a known group allocates
    /// nothing (only a new group's key is copied into ``groups``).
    private var key: [StoredValue] = []

    /// An empty accumulator for `plan`.
    public init(_ plan: AggregatePlan) {
        self.plan = plan
    }

    /// Adds one matching row (its values in column order).
    /// - Throws: nothing since integer sums became exact: a sum past `Int64` is reported by
    ///   ``checkedRows()``. The signature is kept for source compatibility.
    public mutating func add(_ values: some RandomAccessCollection<StoredValue>) throws(StrataError) {
        let start = values.startIndex
        key.removeAll(keepingCapacity: true)
        for column in plan.groupBy { key.append(values[values.index(start, offsetBy: column)]) }
        let base: Int
        if let found = groups[key] {
            base = found
        } else {
            base = partials.count
            groups[key] = base
            partials.append(contentsOf: repeatElement(AggregatePartial(), count: plan.functions.count))
        }
        for (index, function) in plan.functions.enumerated() {
            let value = function.column.map { values[values.index(start, offsetBy: $0)] } ?? .null
            try partials[base + index].add(value, for: function, entity: plan.entity)
        }
    }

    /// The groups in ascending order of their values, each with its aggregates; one group over no
    /// rows when the plan does not group.
    /// - Throws: `.validation` when an integer sum's exact total is past `Int64` (see
    ///   ``sumOverflowMessage``), naming the first such function's column in the plan's order.
    public func checkedRows() throws(StrataError) -> [AggregateRow] {
        try Self.rows(of: plan, groups: groups.lazy.map { ($0.key, $0.value) }, partials: partials)
    }

    /// The groups, as ``checkedRows()`` gives them, but an integer sum past `Int64` held at
    /// `Int64.min` or `Int64.max` instead of reported.
    @available(*, deprecated, message: "use checkedRows(), which reports an integer sum past Int64 as .validation")
    public func rows() -> [AggregateRow] {
        Self.clampedRows(of: plan, groups: groups.lazy.map { ($0.key, $0.value) }, partials: partials)
    }

    /// The result of `plan` from its groups, each a group's values and the offset of its run of
    /// `plan.functions.count` partials in `partials`: in ascending order of the values, with one
    /// group over no rows when the plan does not group. What ``rows()`` returns, for an engine
    /// that folds into ``AggregatePartial``s of its own.
    /// - Throws: `.validation` when an integer sum is past `Int64`, as ``checkedRows()``.
    package static func rows(
        of plan: AggregatePlan, groups: some Collection<([StoredValue], Int)>, partials: [AggregatePartial]
    ) throws(StrataError) -> [AggregateRow] {
        // The first overflowing sum in the plan's order names itself, whatever the groups' order.
        for (index, function) in plan.functions.enumerated() {
            guard case .sum = function else { continue }
            for (_, base) in groups {
                _ = try partials[base + index].checkedValue(for: function, entity: plan.entity)
            }
        }
        return clampedRows(of: plan, groups: groups, partials: partials)
    }

    /// ``rows(of:groups:partials:)`` with an integer sum past `Int64` held at its nearest end.
    private static func clampedRows(
        of plan: AggregatePlan, groups: some Collection<([StoredValue], Int)>, partials: [AggregatePartial]
    ) -> [AggregateRow] {
        if groups.isEmpty && plan.groupBy.isEmpty {
            let empty = AggregatePartial()
            return [AggregateRow(group: [], values: plan.functions.map { empty.clampedValue(for: $0) })]
        }
        var result: [AggregateRow] = []
        result.reserveCapacity(groups.count)
        for (group, base) in groups {
            let run = partials[base..<(base + plan.functions.count)]
            result.append(
                AggregateRow(group: group, values: zip(plan.functions, run).map { $1.clampedValue(for: $0) }))
        }
        result.sort { groupPrecedes($0.group, $1.group) }
        return result
    }

    /// Whether one group's values order before another's: column by column, null first.
    public static func groupPrecedes(_ lhs: [StoredValue], _ rhs: [StoredValue]) -> Bool {
        for (left, right) in zip(lhs, rhs) {
            let order = StoredValue.order(left, right)
            if order != .orderedSame { return order == .orderedAscending }
        }
        return false
    }
}
