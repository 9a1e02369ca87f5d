import StrataStorage

/// What one aggregate function does with a row in ``LMDBAggregateFold``: the function with the
/// storage class of its column settled once, so that a row costs one switch. A column's values
/// are null or of its class (``RowFields`` refuses a row where they are not).
///
/// ```swift
/// let step = LMDBFoldStep(.sum(column: 2), layout: entity.layout)
/// ```
struct LMDBFoldStep {
    enum Kind: UInt8 {
        /// ``AggregateFunction/count``: every row.
        case countRows
        /// The values that are not null, and nothing else: ``AggregateFunction/countValues(column:)``,
        /// and a sum or an average of a text or blob column (such values are counted, not added).
        case countValues
        case sumInteger
        case sumReal
        case minimumInteger
        case maximumInteger
        case minimumReal
        case maximumReal
    }

    let kind: Kind
    /// The column the function reads; 0 for ``Kind/countRows``, which reads none.
    let column: Int

    /// The step of `function` over rows laid out as `layout`; its minimums and maximums are of
    /// integer or real columns (``LMDBAggregateFold/accepts(_:layout:)``).
    init(_ function: AggregateFunction, layout: EntityLayout) {
        guard let column = function.column else {
            kind = .countRows
            column = 0
            return
        }
        self.column = column
        let storageClass = layout.classes[column]
        switch function {
        case .count, .countValues:
            kind = .countValues
        case .sum, .average:
            kind = storageClass == .integer ? .sumInteger : storageClass == .real ? .sumReal : .countValues
        case .minimum:
            kind = storageClass == .integer ? .minimumInteger : .minimumReal
        case .maximum:
            kind = storageClass == .integer ? .maximumInteger : .maximumReal
        }
    }
}

/// One function's figures for one group in ``LMDBAggregateFold``: a trivial value, so that adding
/// a row to it is a few instructions and no reference counting. ``partial(_:)`` turns it into the
/// ``AggregatePartial`` that adding the same values one by one would give.
///
/// ```swift
/// var lane = LMDBFoldLane()
/// lane.add(integer: 5)
/// let partial = lane.partial(.sumInteger)
/// ```
struct LMDBFoldLane {
    /// The rows (``LMDBFoldStep/Kind/countRows``) or the values that are not null.
    var count: Int64 = 0
    /// The integer sum (its low 64 bits, wrapped), or the integer minimum or maximum.
    var integer: Int64 = 0
    /// How many times the integer sum wrapped past `Int64.max` (positive) or `Int64.min`
    /// (negative): the exact sum is `integer + carry · 2^64`, whatever order the values came in.
    var carry: Int64 = 0
    /// The real sum, or the real minimum or maximum.
    var real: Double = 0

    /// Adds an integer to the sum, exactly: a wrap past either end of `Int64` is kept in ``carry``.
    @inline(__always)
    mutating func add(integer value: Int64) {
        let (sum, overflow) = integer.addingReportingOverflow(value)
        if overflow { carry &+= value < 0 ? -1 : 1 }
        integer = sum
        count &+= 1
    }

    /// The exact integer sum.
    var exactSum: Int128 { Int128(carry) << 64 + Int128(integer) }

    /// Keeps `value` when it is the first or below (`minimum`) or above the one kept.
    @inline(__always)
    mutating func keep(integer value: Int64, minimum: Bool) {
        if count == 0 || (minimum ? value < integer : value > integer) { integer = value }
        count &+= 1
    }

    /// Keeps `value` when it is the first or below (`minimum`) or above the one kept. An equal
    /// value (0.0 after -0.0) leaves the first, as ``StoredValue/order(_:_:)`` does.
    @inline(__always)
    mutating func keep(real value: Double, minimum: Bool) {
        if count == 0 || (minimum ? value < real : value > real) { real = value }
        count &+= 1
    }

    /// The partial of a function whose step is `kind`.
    func partial(_ kind: LMDBFoldStep.Kind) -> AggregatePartial {
        switch kind {
        case .countRows, .countValues:
            AggregatePartial(count: count)
        case .sumInteger:
            AggregatePartial(count: count, integerSum: exactSum)
        case .sumReal:
            AggregatePartial(count: count, realSum: real, sawReal: count > 0)
        case .minimumInteger, .maximumInteger:
            AggregatePartial(count: count, extreme: count > 0 ? .integer(integer) : .null)
        case .minimumReal, .maximumReal:
            AggregatePartial(count: count, extreme: count > 0 ? .real(real) : .null)
        }
    }
}
