import Foundation

/// One aggregate's running state over the rows of one group: the reference semantics of
/// ``AggregateFunction``, shared by ``AggregateAccumulator`` and by an engine that folds a row's
/// values without making them into ``StoredValue``s (LMDB reads them in place from its rows).
///
/// ```swift
/// var partial = AggregatePartial()
/// try partial.add(.integer(5), for: .sum(column: 2), entity: 0)
/// partial.addNull(for: .sum(column: 2))
/// try partial.checkedValue(for: .sum(column: 2), entity: 0)   // .integer(5)
/// ```
///
/// Integer sums are exact (128 bits) whatever order the values come in; only the total is checked
/// against `Int64`, when it is read (``checkedValue(for:entity:)``), and an average divides the
/// exact total, so it never fails.
///
/// The typed adds equal ``add(_:for:entity:)`` of the same value: `add(integer: n, …)` is
/// `add(.integer(n), …)`, `add(real: x, …)` is
/// `add(.real(x), …)`, ``addNull(for:)`` is
/// `add(.null, …)`, and ``addUnread(for:)`` is the add of a text or a blob for every function
/// that does not look at it (all but minimum and maximum).
public struct AggregatePartial: Sendable {
    @usableFromInline var count: Int64 = 0
    @usableFromInline var integerSum: Int128 = 0
    @usableFromInline var realSum: Double = 0
    @usableFromInline var sawReal = false
    @usableFromInline var extreme: StoredValue = .null

    /// The state over no rows.
    @inlinable public init() {}

    /// A partial with the figures a fold kept itself: `count` values (or rows, for
    /// ``AggregateFunction/count``), an integer and a real sum, whether a real was summed, and
    /// the extreme of a minimum or maximum (`.null` when there is none). The result is the
    /// partial that adding the same values one by one would give.
    package init(
        count: Int64, integerSum: Int128 = 0, realSum: Double = 0, sawReal: Bool = false, extreme: StoredValue = .null
    ) {
        self.count = count
        self.integerSum = integerSum
        self.realSum = realSum
        self.sawReal = sawReal
        self.extreme = extreme
    }

    /// Adds one row's value of the function's column (`.null` for ``AggregateFunction/count``).
    /// - Throws: nothing since integer sums became exact: a sum past `Int64` is reported when it is
    ///   read (``checkedValue(for:entity:)``). The signature is kept for source compatibility.
    public mutating func add(_ value: StoredValue, for function: AggregateFunction, entity: Int) throws(StrataError) {
        if case .count = function {
            count += 1
            return
        }
        if case .null = value { return }
        count += 1
        switch function {
        case .count, .countValues:
            return
        case .sum, .average:
            switch value {
            case .integer(let number):
                // At most 2^63 values of at most 2^63 each: the total fits 128 bits.
                integerSum &+= Int128(number)
            case .real(let number):
                realSum += number
                sawReal = true
            default:
                return
            }
        case .minimum:
            keep(value, minimum: true)
        case .maximum:
            keep(value, minimum: false)
        }
    }

    /// Makes a non-null `value` the extreme when there is none yet or when it orders before the
    /// current one (`minimum`) or after it.
    @usableFromInline
    mutating func keep(_ value: StoredValue, minimum: Bool) {
        if case .null = extreme {
            extreme = value
        } else if StoredValue.order(value, extreme) == (minimum ? .orderedAscending : .orderedDescending) {
            extreme = value
        }
    }

    /// ``add(_:for:entity:)`` of `.integer(number)`. Always true: integer sums are exact and
    /// checked when read (``checkedValue(for:entity:)``); in release 0.1.0 it was false, adding
    /// nothing, when the running sum passed `Int64`.
    @inlinable @inline(__always)
    @available(
        *, deprecated,
        message: """
            integer sums are exact now and this always returns true: use add(_:for:entity:) with .integer(n); \
            read the result with checkedValue(for:entity:)
            """
    )
    public mutating func add(integer number: Int64, for function: AggregateFunction) -> Bool {
        switch function {
        case .count, .countValues:
            count += 1
        case .sum, .average:
            count += 1
            integerSum &+= Int128(number)
        case .minimum:
            count += 1
            keep(.integer(number), minimum: true)
        case .maximum:
            count += 1
            keep(.integer(number), minimum: false)
        }
        return true
    }

    /// ``add(_:for:entity:)`` of `.real(number)`.
    @inlinable @inline(__always)
    public mutating func add(real number: Double, for function: AggregateFunction) {
        switch function {
        case .count, .countValues:
            count += 1
        case .sum, .average:
            count += 1
            realSum += number
            sawReal = true
        case .minimum:
            count += 1
            keep(.real(number), minimum: true)
        case .maximum:
            count += 1
            keep(.real(number), minimum: false)
        }
    }

    /// ``add(_:for:entity:)`` of `.null`: only ``AggregateFunction/count`` counts it.
    @inlinable @inline(__always)
    public mutating func addNull(for function: AggregateFunction) {
        if case .count = function { count += 1 }
    }

    /// ``add(_:for:entity:)`` of a text or a blob for a function that counts it and adds nothing
    /// (every function but ``AggregateFunction/minimum(column:)`` and
    /// ``AggregateFunction/maximum(column:)``, whose callers pass the value itself).
    @inlinable
    public mutating func addUnread(for function: AggregateFunction) {
        count += 1
    }

    /// The aggregate's value, as ``AggregateAccumulator/checkedRows()`` reports it.
    /// - Throws: `.validation` when an integer sum is past `Int64`
    ///   (``AggregateAccumulator/sumOverflowMessage``), naming `entity` and the function's column.
    public func checkedValue(for function: AggregateFunction, entity: Int) throws(StrataError) -> StoredValue {
        if case .sum(let column) = function, !sawReal, Int64(exactly: integerSum) == nil {
            throw Self.overflow(entity: entity, column: column)
        }
        return clampedValue(for: function)
    }

    /// The aggregate's value, an integer sum past `Int64` held at `Int64.min` or `Int64.max`.
    @available(
        *, deprecated,
        message: "use checkedValue(for:entity:), which reports an integer sum past Int64 as .validation"
    )
    public func value(for function: AggregateFunction) -> StoredValue {
        clampedValue(for: function)
    }

    /// The aggregate's value, an integer sum past `Int64` held at `Int64.min` or `Int64.max`.
    func clampedValue(for function: AggregateFunction) -> StoredValue {
        switch function {
        case .count, .countValues:
            return .integer(count)
        case .sum:
            if sawReal { return .real(realSum + Double(integerSum)) }
            return .integer(Int64(clamping: integerSum))
        case .average:
            guard count > 0 else { return .null }
            return .real((sawReal ? realSum + Double(integerSum) : Double(integerSum)) / Double(count))
        case .minimum, .maximum:
            return extreme
        }
    }

    /// The `.validation` error of an integer sum of `column` of `entity` past `Int64`.
    package static func overflow(entity: Int, column: Int) -> StrataError {
        .validation([
            ValidationIssue(
                entity: String(entity), property: String(column), message: AggregateAccumulator.sumOverflowMessage)
        ])
    }
}
