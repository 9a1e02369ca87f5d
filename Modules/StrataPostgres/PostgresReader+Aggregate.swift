import StrataStorage

/// Aggregates in one SQL statement: `SELECT groups, aggregates FROM table WHERE filter GROUP BY
/// groups ORDER BY groups NULLS FIRST`, with the reference semantics of ``AggregateAccumulator``.
///
/// Text columns are `COLLATE "C"` (byte order, which the stored escape keeps), so groups, `min` and
/// `max` order texts by UTF-8 bytes; blobs compare as their hex text (bytea has no `min`/`max`).
/// `sum(int8)` is `numeric`: it comes back as text and is read exactly, and one past `Int64` is the
/// reference's overflow error. `avg()` is not used: the average is the exact sum divided by the
/// count here, as the reference divides, so it is the same double bit for bit. A filter the server
/// can only approximate (``PostgresFilterSQL/isExact``) leaves the plan to the reference fold over
/// the re-checked rows.
extension PostgresReader {
    func aggregate(_ plan: AggregatePlan) throws -> [AggregateRow] {
        let session = try open()
        let table = try engine.table(plan.entity)
        try plan.checkColumns(of: table.entity)
        guard plan.sumsOnlyNumbers(of: table.entity) else { return try foldAggregate(plan) }
        var translated: PostgresFilterSQL?
        if let filter = plan.filter {
            translated = try PostgresFilterSQL(filter, entity: table.entity)
            if translated?.isExact == false { return try foldAggregate(plan) }
        }
        let columns = table.entity.columns
        let groups = plan.groupBy.map { pgQuoted(columns[$0].name) }
        var select = groups
        for function in plan.functions {
            switch function {
            case .count: select.append("count(*)")
            case .countValues(let column): select.append("count(\(pgQuoted(columns[column].name)))")
            case .sum(let column): select.append(Self.sum(of: column, table))
            case .minimum(let column): select.append(Self.extreme("min", of: column, table))
            case .maximum(let column): select.append(Self.extreme("max", of: column, table))
            case .average(let column):
                select.append("\(Self.sum(of: column, table)), count(\(pgQuoted(columns[column].name)))")
            }
        }
        // A plan with neither groups nor functions still gives its one group.
        if select.isEmpty { select = ["count(*)"] }
        var sql = "SELECT \(select.joined(separator: ", ")) FROM \(table.table)"
        if let translated { sql += " WHERE " + translated.sql }
        if !groups.isEmpty {
            sql += " GROUP BY \(groups.joined(separator: ", ")) ORDER BY "
            sql += groups.map { "\($0) ASC NULLS FIRST" }.joined(separator: ", ")
        }
        let result = try session.run(sql, translated?.parameters ?? [])
        let reader = PostgresAggregateDecoder(result: result, table: table, store: engine.location)
        var rows: [AggregateRow] = []
        rows.reserveCapacity(result.rowCount)
        for index in 0..<result.rowCount {
            guard let row = try reader.row(index, plan) else {
                // A sum past Int64: which column overflowed first is the reference's to say (it
                // depends on the order rows are added in); one candidate names itself.
                let candidates = plan.summedIntegerColumns(of: table.entity)
                if candidates.count == 1 { throw plan.sumOverflow(column: candidates[0]) }
                return try foldAggregate(plan)
            }
            rows.append(row)
        }
        return rows
    }

    /// `min(c)` or `max(c)`. PostgreSQL has neither for `bytea`: a blob is compared as its hex
    /// text in byte order (two digits per byte, digits before letters, so the order is the bytes'
    /// order, a prefix first) and turned back into bytes.
    private static func extreme(_ function: String, of column: Int, _ table: PostgresTableLayout) -> String {
        let name = pgQuoted(table.entity.columns[column].name)
        guard table.entity.columns[column].type.storageClass == .blob else { return "\(function)(\(name))" }
        return "decode(\(function)(encode(\(name), 'hex') COLLATE \"C\"), 'hex')"
    }

    /// `sum(c)`, as text for an integer column (its `numeric` sum read exactly).
    private static func sum(of column: Int, _ table: PostgresTableLayout) -> String {
        let name = pgQuoted(table.entity.columns[column].name)
        return table.entity.columns[column].type.storageClass == .integer ? "sum(\(name))::text" : "sum(\(name))"
    }
}

/// Reads the rows of an aggregate statement: the group values, then each function's columns.
struct PostgresAggregateDecoder {
    let result: PGResult
    let table: PostgresTableLayout
    let store: String

    /// Group `index`, or nil when an integer sum in it is past `Int64`.
    /// - Throws: `.storeCorrupt` when a value does not decode as its column's type.
    func row(_ index: Int, _ plan: AggregatePlan) throws(StrataError) -> AggregateRow? {
        var cell = 0
        func next(_ column: Int) throws(StrataError) -> StoredValue {
            defer { cell += 1 }
            return try value(index, cell, table.decoding[column].storageClass, column)
        }
        func count() throws(StrataError) -> Int64 {
            defer { cell += 1 }
            guard let count = result.int64(index, cell) else { throw bad("a count") }
            return count
        }
        /// nil when the sum is past `Int64`.
        func sum(_ column: Int) throws(StrataError) -> StoredValue? {
            defer { cell += 1 }
            if result.isNull(index, cell) { return .integer(0) }
            guard table.decoding[column].storageClass == .integer else {
                return try value(index, cell, .real, column)
            }
            guard let digits = result.text(index, cell) else { throw bad("a sum") }
            return Int64(digits).map { .integer($0) }
        }
        return try plan.row(value: next, count: count, sum: sum)
    }

    private func value(
        _ index: Int, _ cell: Int, _ storageClass: StorageClass, _ column: Int
    ) throws(StrataError) -> StoredValue {
        if result.isNull(index, cell) { return .null }
        let what = "an aggregate of \(table.entity.columns[column].name)"
        switch storageClass {
        case .integer:
            guard let v = result.int64(index, cell) else { throw bad(what) }
            return .integer(v)
        case .real:
            guard let v = result.double(index, cell), !v.isNaN else { throw bad(what) }
            return .real(v)
        case .text:
            guard let v = result.text(index, cell) else { throw bad(what) }
            return .text(v)
        case .blob:
            guard let v = result.data(index, cell) else { throw bad(what) }
            return .blob(v)
        }
    }

    private func bad(_ what: String) -> StrataError {
        .storeCorrupt(
            """
            \(store): \(what) of \(table.entity.name) does not decode as its type; the table was altered outside \
            Strata
            """
        )
    }
}
