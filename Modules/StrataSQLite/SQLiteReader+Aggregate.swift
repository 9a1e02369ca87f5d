import StrataStorage

/// Aggregates in one SQL statement: `SELECT groups, aggregates FROM table WHERE filter GROUP BY
/// groups ORDER BY groups`, with the reference semantics of ``AggregateAccumulator``.
///
/// Texts group and compare with SQLite's `BINARY` collation (the columns declare none), which is
/// the UTF-8 byte order of ``StoredValue/order(_:_:)``; `ORDER BY` puts NULL first. `sum()` gives
/// NULL over no value, read as the integer 0, and for a NaN real sum, told apart by the count
/// selected after every real sum. SQLite's `sum()` of integers fails when its running total passes
/// `Int64`; the statement is then run again with each integer summed in two 32-bit halves,
/// added exactly here, so only a total past `Int64` is an error, as in the reference. `avg()` is
/// not used, because SQLite adds integers as doubles for it: the average is the exact sum
/// divided by `count()` here, as the reference divides.
extension SQLiteReader {
    func aggregate(_ plan: AggregatePlan) throws -> [AggregateRow] {
        let connection = try open()
        let table = try engine.table(plan.entity)
        try plan.checkColumns(of: table.entity)
        guard plan.sumsOnlyNumbers(of: table.entity) else { return try foldAggregate(plan) }
        do {
            return try aggregate(plan, table, on: connection, splittingIntegerSums: false)
        } catch let error as StrataError {
            guard case .engineFailure(let native) = error, native.message.contains("integer overflow") else {
                throw error
            }
            // SQLite's sum() fails as soon as its running total passes Int64, whatever the total.
            // Again, with each integer summed in two 32-bit halves, which cannot overflow, and
            // the halves added exactly here.
            return try aggregate(plan, table, on: connection, splittingIntegerSums: true)
        }
    }

    private func aggregate(
        _ plan: AggregatePlan, _ table: SQLiteTableLayout, on connection: SQLiteConnection, splittingIntegerSums: Bool
    ) throws -> [AggregateRow] {
        let query = try SQLiteQuery.aggregate(
            plan, table: table, variableLimit: connection.variableLimit, splittingIntegerSums: splittingIntegerSums)
        var overflow: Int?
        let rows = try run(query, on: connection) { (statement) throws(StrataError) in
            try Self.groups(of: statement, plan, table, splitting: splittingIntegerSums, overflow: &overflow)
        }
        try plan.checkOverflow(overflow)
        return rows
    }

    /// Reads the groups: the group values, then each function's columns (two for an average,
    /// and see ``SQLiteQuery/aggregate(_:table:variableLimit:splittingIntegerSums:)`` for sums).
    private static func groups(
        of statement: SQLiteStatement, _ plan: AggregatePlan, _ table: SQLiteTableLayout, splitting: Bool,
        overflow: inout Int?
    ) throws(StrataError) -> [AggregateRow] {
        var rows: [AggregateRow] = []
        while try statement.step() {
            var index: Int32 = 0
            func count() -> Int64 {
                defer { index += 1 }
                return statement.int64(at: index)
            }
            func next(_ column: Int, asBool: Bool = true) throws(StrataError) -> StoredValue {
                defer { index += 1 }
                let decoding = table.decoding[column]
                return try statement.value(at: index, as: decoding.storageClass, isBool: asBool && decoding.isBool) {
                    "an aggregate of \(table.entity.name).\(table.entity.columns[column].name)"
                }
            }
            // A real sum is followed by its count of values: SQLite gives NULL for a sum that is
            // NaN (+infinity and −infinity added), as for a sum of no value. Split integer sums
            // come as their high and low 32-bit halves.
            func sum(_ column: Int) throws(StrataError) -> AggregatePlan.EngineSum {
                switch table.decoding[column].storageClass {
                case .real:
                    let total = try next(column, asBool: false)
                    let values = count()
                    return total.isNull && values > 0 ? .real(.nan) : AggregatePlan.EngineSum(total)
                case .integer where splitting:
                    let high = try next(column, asBool: false)
                    let low = try next(column, asBool: false)
                    guard case .integer(let upper) = high, case .integer(let lower) = low else { return .integer(0) }
                    return .integer(Int128(upper) << 32 + Int128(lower))
                default:
                    return AggregatePlan.EngineSum(try next(column, asBool: false))
                }
            }
            rows.append(
                try plan.row(
                    value: { column throws(StrataError) in try next(column) }, count: { count() }, sum: sum,
                    overflow: &overflow))
        }
        return rows
    }
}

extension SQLiteQuery {
    /// The statement of an aggregate plan: the group columns, then per function `count(*)`,
    /// `count(c)`, the sum (below), `min(c)`, `max(c)`, or the sum and `count(c)` for an average.
    /// A sum is `sum(c)`; of a real column `sum(c), count(c)`; of an integer column when
    /// `splittingIntegerSums`, `sum(c >> 32), sum(c & 4294967295)`: the sums of its high (signed)
    /// and low 32-bit halves, which pass `Int64` only past 2^31 rows.
    /// - Throws: `.misuse` when the filter names columns the entity lacks.
    static func aggregate(
        _ plan: AggregatePlan, table: SQLiteTableLayout, variableLimit: Int, splittingIntegerSums: Bool = false
    ) throws(StrataError) -> SQLiteQuery {
        let columns = table.entity.columns
        let groups = plan.groupBy.map { quoted(columns[$0].name) }
        var select = groups
        for function in plan.functions {
            switch function {
            case .count: select.append("count(*)")
            case .countValues(let column): select.append("count(\(quoted(columns[column].name)))")
            case .sum(let column): select.append(sum(of: columns[column], splitting: splittingIntegerSums))
            case .minimum(let column): select.append("min(\(quoted(columns[column].name)))")
            case .maximum(let column): select.append("max(\(quoted(columns[column].name)))")
            case .average(let column):
                let sum = sum(of: columns[column], splitting: splittingIntegerSums)
                select.append("\(sum), count(\(quoted(columns[column].name)))")
            }
        }
        // A plan with neither groups nor functions still gives its one group.
        if select.isEmpty { select = ["count(*)"] }
        var query = SQLiteQuery(sql: "SELECT \(select.joined(separator: ", ")) FROM \(table.table)", parameters: [])
        if let filter = plan.filter {
            try query.appendWhere(filter, entity: table.entity, variableLimit: variableLimit)
        }
        if !groups.isEmpty {
            let list = groups.joined(separator: ", ")
            query.sql += " GROUP BY \(list) ORDER BY \(list)"
        }
        return query
    }

    /// `sum(c)`; for a real column `sum(c), count(c)`: the count tells a NaN sum, which SQLite
    /// gives as NULL, from a sum of no value; for an integer column, when `splitting`, the sums of
    /// its two 32-bit halves.
    private static func sum(of column: ColumnSchema, splitting: Bool) -> String {
        let name = quoted(column.name)
        switch column.type.storageClass {
        case .real: return "sum(\(name)), count(\(name))"
        case .integer where splitting: return "sum(\(name) >> 32), sum(\(name) & 4294967295)"
        default: return "sum(\(name))"
        }
    }
}
