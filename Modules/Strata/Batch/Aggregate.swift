import StrataStorage

/// One aggregate of ``ObjectContext/aggregate(_:groupedBy:_:)``: a count, or a sum, minimum,
/// maximum or average of an attribute.
///
/// ```swift
/// let functions: [Aggregate<Account>] = [.count, .sum(\.balance), .maximum(\.name)]
/// ```
///
/// Semantics, the same on every engine: counts count rows (``count``) or non-nil values
/// (``count(_:)``); a sum adds the non-nil values and is 0 over none; minimum and maximum give
/// nil over none and order texts by their UTF-8 bytes; an average is a `Double`, nil over none.
public struct Aggregate<Model: ManagedObject>: Sendable {
    enum Function: Sendable {
        case count
        case countValues
        case sum
        case minimum
        case maximum
        case average
    }

    let function: Function
    let keyPath: (any PartialKeyPath<Model> & Sendable)?

    /// The number of rows.
    public static var count: Self { Self(function: .count, keyPath: nil) }

    /// The number of rows whose attribute (or to-one relationship) is not nil.
    public static func count(_ keyPath: any PartialKeyPath<Model> & Sendable) -> Self {
        Self(function: .countValues, keyPath: keyPath)
    }

    /// The sum of a numeric attribute's non-nil values (0 when there are none).
    public static func sum<Value: AttributeValue & Numeric>(_ keyPath: any KeyPath<Model, Value> & Sendable) -> Self {
        Self(function: .sum, keyPath: keyPath)
    }

    /// The smallest non-nil value of an attribute, or nil.
    public static func minimum(_ keyPath: any PartialKeyPath<Model> & Sendable) -> Self {
        Self(function: .minimum, keyPath: keyPath)
    }

    /// The largest non-nil value of an attribute, or nil.
    public static func maximum(_ keyPath: any PartialKeyPath<Model> & Sendable) -> Self {
        Self(function: .maximum, keyPath: keyPath)
    }

    /// The mean of a numeric attribute's non-nil values, as a `Double`, or nil.
    public static func average<Value: AttributeValue & Numeric>(
        _ keyPath: any KeyPath<Model, Value> & Sendable
    ) -> Self {
        Self(function: .average, keyPath: keyPath)
    }

    func storageFunction(column: Int?) -> AggregateFunction {
        switch (function, column) {
        case (.count, _), (_, nil): .count
        case (.countValues, let column?): .countValues(column: column)
        case (.sum, let column?): .sum(column: column)
        case (.minimum, let column?): .minimum(column: column)
        case (.maximum, let column?): .maximum(column: column)
        case (.average, let column?): .average(column: column)
        }
    }
}

/// One group of ``ObjectContext/aggregate(_:groupedBy:_:)``: its values and its aggregates.
///
/// ```swift
/// for row in try context.aggregate(request, groupedBy: [\.currency], [.count, .sum(\.balance)]) {
///     print(row.group[0].string ?? "none", row.values[0].integer ?? 0, row.values[1].integer ?? 0)
/// }
/// ```
public struct AggregateResult: Sendable, Hashable {
    /// The group's values, one per `groupedBy` key path, in order (empty without grouping).
    public let group: [AggregateValue]
    /// The aggregates, one per requested ``Aggregate``, in order.
    public let values: [AggregateValue]
}
