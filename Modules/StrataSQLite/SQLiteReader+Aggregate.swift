import StrataStorage

/// Aggregates in one SQL statement: `SELECT groups, aggregates FROM table WHERE filter GROUP BY
/// groups ORDER BY groups`, with the reference semantics of ``AggregateAccumulator``.
///
/// Texts group and compare with SQLite's `BINARY` collation (the columns declare none), which is
/// the UTF-8 byte order of ``StoredValue/order(_:_:)``; `ORDER BY` puts NULL first. `sum()` gives
/// NULL over no value, read as the integer 0; `avg()` is not used, because SQLite adds integers
/// as doubles for it: the average is the exact `sum()` divided by `count()` here, as the
/// reference divides.
extension SQLiteReader {
    func aggregate(_ plan: AggregatePlan) throws -> [AggregateRow] {
        let connection = try open()
        let table = try engine.table(plan.entity)
        try plan.checkColumns(of: table.entity)
        guard plan.sumsOnlyNumbers(of: table.entity) else { return try foldAggregate(plan) }
        let query = try SQLiteQuery.aggregate(plan, table: table, variableLimit: connection.variableLimit)
        do {
            return try run(query, on: connection) { (statement) throws(StrataError) in
                try Self.groups(of: statement, plan, table)
            }
        } catch let error as StrataError {
            guard case .engineFailure(let native) = error, native.message.contains("integer overflow") else {
                throw error
            }
            // Which column overflowed first is the reference's to say (it depends on the order the
            // rows are added in): one candidate names itself, several go through the fold.
            let candidates = plan.summedIntegerColumns(of: table.entity)
            if candidates.count == 1 { throw plan.sumOverflow(column: candidates[0]) }
            return try foldAggregate(plan)
        }
    }

    /// Reads the groups: the group values, then each function's columns (two for an average).
    private static func groups(
        of statement: SQLiteStatement, _ plan: AggregatePlan, _ table: SQLiteTableLayout
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
            // SQLite reports an integer sum past Int64 as an error of the statement, so every
            // sum read here fits.
            let row = try plan.row(
                value: { column throws(StrataError) in try next(column) }, count: { count() },
                sum: { column throws(StrataError) in AggregatePlan.sum(try next(column, asBool: false)) })
            if let row { rows.append(row) }
        }
        return rows
    }
}

extension SQLiteQuery {
    /// The statement of an aggregate plan: the group columns, then per function `count(*)`,
    /// `count(c)`, `sum(c)`, `min(c)`, `max(c)`, or `sum(c), count(c)` for an average.
    /// - Throws: `.misuse` when the filter names columns the entity lacks.
    static func aggregate(
        _ plan: AggregatePlan, table: SQLiteTableLayout, variableLimit: Int
    ) throws(StrataError) -> SQLiteQuery {
        let columns = table.entity.columns
        let groups = plan.groupBy.map { quoted(columns[$0].name) }
        var select = groups
        for function in plan.functions {
            switch function {
            case .count: select.append("count(*)")
            case .countValues(let column): select.append("count(\(quoted(columns[column].name)))")
            case .sum(let column): select.append("sum(\(quoted(columns[column].name)))")
            case .minimum(let column): select.append("min(\(quoted(columns[column].name)))")
            case .maximum(let column): select.append("max(\(quoted(columns[column].name)))")
            case .average(let column):
                let name = quoted(columns[column].name)
                select.append("sum(\(name)), count(\(name))")
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
}
