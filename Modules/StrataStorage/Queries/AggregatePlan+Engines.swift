/// What the engines that run an ``AggregatePlan`` in their own query language share: checking the
/// plan against the entity, deciding when to leave it to the reference fold, and finishing the
/// values the query gives so that they equal ``AggregateAccumulator``'s.
extension AggregatePlan {
    /// Checks that every column the plan names exists in `entity`.
    /// - Throws: `.misuse` naming the first column the entity lacks.
    package func checkColumns(of entity: EntitySchema) throws(StrataError) {
        let columns = groupBy + functions.compactMap(\.column)
        for column in columns where !entity.columns.indices.contains(column) {
            throw .misuse(
                """
                the aggregate names column \(column), but \(entity.name) has \(entity.columns.count) columns; \
                name columns by their index in the entity
                """
            )
        }
    }

    /// Whether an engine's `SUM`/`AVG` gives the reference result: false when the plan sums or
    /// averages a text or blob column (the reference counts such values and adds nothing), which the
    /// engine then leaves to ``AggregateAccumulator``.
    package func sumsOnlyNumbers(of entity: EntitySchema) -> Bool {
        functions.allSatisfy { function in
            switch function {
            case .sum(let column), .average(let column):
                let storageClass = entity.columns[column].type.storageClass
                return storageClass == .integer || storageClass == .real
            default:
                return true
            }
        }
    }

    /// Whether the plan sums or averages a real column: a sum that may pass the finite range
    /// (the reference gives infinity) or add +infinity and −infinity (the reference gives NaN).
    package func sumsReals(of entity: EntitySchema) -> Bool {
        functions.contains { function in
            switch function {
            case .sum(let column), .average(let column): entity.columns[column].type.storageClass == .real
            default: false
            }
        }
    }

    /// One result row of an aggregate statement in the layout the SQL engines select: the group
    /// columns, then one cell per function, two for an average (its sum, then its count). Each
    /// closure reads the next cell (or cells): `value` as the value of a column, `count` as a
    /// count, `sum` as the sum of a column, exact for integers.
    ///
    /// An integer sum past `Int64` is held at its nearest end in the row and reported in
    /// `overflow`: the lowest such function index of all the rows read, which ``checkOverflow(_:)``
    /// turns into the reference's error once every row is read. An average is never past range.
    package func row(
        value: (Int) throws(StrataError) -> StoredValue, count: () throws(StrataError) -> Int64,
        sum: (Int) throws(StrataError) -> EngineSum, overflow: inout Int?
    ) throws(StrataError) -> AggregateRow {
        var group: [StoredValue] = []
        group.reserveCapacity(groupBy.count)
        for column in groupBy { group.append(try value(column)) }
        var values: [StoredValue] = []
        values.reserveCapacity(functions.count)
        for (index, function) in functions.enumerated() {
            switch function {
            case .count, .countValues:
                values.append(.integer(try count()))
            case .sum(let column):
                switch try sum(column) {
                case .integer(let total):
                    if Int64(exactly: total) == nil { overflow = min(overflow ?? index, index) }
                    values.append(.integer(Int64(clamping: total)))
                case .real(let total):
                    values.append(.real(total))
                }
            case .minimum(let column), .maximum(let column):
                values.append(try value(column))
            case .average(let column):
                let total = try sum(column)
                values.append(Self.average(sum: total, count: try count()))
            }
        }
        return AggregateRow(group: group, values: values)
    }

    /// Throws the reference's `.validation` for the sum at function `index` (from
    /// ``row(value:count:sum:overflow:)``), if any: an integer sum whose exact total is past `Int64`.
    package func checkOverflow(_ index: Int?) throws(StrataError) {
        guard let index, case .sum(let column) = functions[index] else { return }
        throw AggregatePartial.overflow(entity: entity, column: column)
    }

    /// An engine's sum of one column: exact for integers, as the engine added them for reals.
    package enum EngineSum {
        case integer(Int128)
        case real(Double)

        /// The sum of an engine's cell: SQL's NULL (no value added) is the integer 0, as in the
        /// reference; an integer or a real as it is.
        package init(_ cell: StoredValue) {
            switch cell {
            case .integer(let total): self = .integer(Int128(total))
            case .real(let total): self = .real(total)
            default: self = .integer(0)
            }
        }
    }

    /// The reference value of ``AggregateFunction/average(column:)`` from the exact sum and the
    /// number of values added, divided here as ``AggregatePartial`` divides (an integer sum
    /// converted to `Double` once), so the result is bit for bit the same.
    package static func average(sum: EngineSum, count: Int64) -> StoredValue {
        guard count > 0 else { return .null }
        switch sum {
        case .integer(let total): return .real(Double(total) / Double(count))
        case .real(let total): return .real((total + Double(0)) / Double(count))
        }
    }
}

extension StoreReader {
    /// The reference result: ``AggregateAccumulator`` over ``forEachRow(for:_:)``, as the default
    /// ``aggregate(_:)`` computes it, for an engine's override to fall back on.
    /// - Throws: the errors of ``forEachRow(for:_:)`` and of ``AggregateAccumulator/add(_:)``.
    package func foldAggregate(_ plan: AggregatePlan) throws -> [AggregateRow] {
        var accumulator = AggregateAccumulator(plan)
        try forEachRow(for: FetchPlan(entity: plan.entity, filter: plan.filter, inKeyOrder: false)) { row in
            try accumulator.add(row.values)
        }
        return try accumulator.checkedRows()
    }
}

extension AggregateAccumulator {
    /// ``add(_:)`` of a row's values, compiled here: an engine module's call runs the fold
    /// specialised for `ContiguousArray`, not the generic one (about 15% of an LMDB aggregate).
    /// - Throws: `.validation` when an integer sum passes `Int64`, as ``add(_:)``.
    package mutating func add(row values: ContiguousArray<StoredValue>) throws(StrataError) {
        try add(values)
    }
}
