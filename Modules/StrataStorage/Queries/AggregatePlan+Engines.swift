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

    /// One result row of an aggregate statement in the layout the SQL engines select: the group
    /// columns, then one cell per function, two for an average (its sum, then its count). Each
    /// closure reads the next cell: `value` as the value of a column, `count` as a count, `sum` as
    /// the sum of a column (nil when it is past `Int64`).
    /// - Returns: the group's row, or nil when one of its sums is past `Int64`.
    package func row(
        value: (Int) throws(StrataError) -> StoredValue, count: () throws(StrataError) -> Int64,
        sum: (Int) throws(StrataError) -> StoredValue?
    ) throws(StrataError) -> AggregateRow? {
        var group: [StoredValue] = []
        group.reserveCapacity(groupBy.count)
        for column in groupBy { group.append(try value(column)) }
        var values: [StoredValue] = []
        values.reserveCapacity(functions.count)
        for function in functions {
            switch function {
            case .count, .countValues:
                values.append(.integer(try count()))
            case .sum(let column):
                guard let total = try sum(column) else { return nil }
                values.append(total)
            case .minimum(let column), .maximum(let column):
                values.append(try value(column))
            case .average(let column):
                guard let total = try sum(column) else { return nil }
                values.append(Self.average(sum: total, count: try count()))
            }
        }
        return AggregateRow(group: group, values: values)
    }

    /// The reference value of ``AggregateFunction/sum(column:)`` from an engine's sum, nil (SQL's
    /// NULL) when no value was added: `0` as an integer.
    package static func sum(_ engineSum: StoredValue?) -> StoredValue {
        guard let engineSum, !engineSum.isNull else { return .integer(0) }
        return engineSum
    }

    /// The reference value of ``AggregateFunction/average(column:)`` from the exact sum and the
    /// number of values added, divided here as ``AggregateAccumulator`` divides (an integer sum
    /// converted to `Double` once), so the result is bit for bit the same.
    package static func average(sum: StoredValue, count: Int64) -> StoredValue {
        guard count > 0 else { return .null }
        switch sum {
        case .integer(let total): return .real(Double(total) / Double(count))
        case .real(let total): return .real((total + Double(0)) / Double(count))
        default: return .null
        }
    }

    /// The overflow error of ``AggregateAccumulator`` for a sum of `column`.
    package func sumOverflow(column: Int) -> StrataError {
        AggregatePartial.overflow(entity: entity, column: column)
    }

    /// The integer columns the plan sums or averages, each once, in the plan's order: the
    /// candidates for an overflow.
    package func summedIntegerColumns(of entity: EntitySchema) -> [Int] {
        var columns: [Int] = []
        for function in functions {
            switch function {
            case .sum(let column), .average(let column):
                if entity.columns[column].type.storageClass == .integer && !columns.contains(column) {
                    columns.append(column)
                }
            default:
                continue
            }
        }
        return columns
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
        return accumulator.rows()
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
