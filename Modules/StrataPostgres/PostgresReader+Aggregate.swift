import StrataStorage

/// Aggregates in one SQL statement: `SELECT groups, aggregates FROM table WHERE filter GROUP BY
/// groups ORDER BY groups NULLS FIRST`, with the reference semantics of ``AggregateAccumulator``.
///
/// Text columns are `COLLATE "C"` (byte order, which the stored escape keeps), so groups, `min` and
/// `max` order texts by UTF-8 bytes; blobs compare as their hex text (bytea has no `min`/`max`).
/// `sum(int8)` is `numeric`: it comes back as text and is read exactly (128 bits), and a total
/// past `Int64` is the reference's overflow error (an average of it is not). `avg()` is not
/// used: the average is the exact sum divided by the count here, as the reference divides, so it
/// is the same double bit for bit. A filter the server
/// can only approximate (``PostgresFilterSQL/isExact``) leaves the plan to the reference fold over
/// the re-checked rows, and so does a real sum the server refuses as out of range (the reference
/// gives infinity). A real sum may be NaN (+infinity and −infinity added), as the reference's is.
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
        let parameters = translated?.parameters ?? []
        let result: PGResult
        if plan.sumsReals(of: table.entity) {
            guard let summed = try Self.runRealSums(sql, parameters, on: session) else {
                return try foldAggregate(plan)
            }
            result = summed
        } else {
            result = try session.run(sql, parameters)
        }
        let reader = PostgresAggregateDecoder(result: result, table: table, store: engine.location)
        var rows: [AggregateRow] = []
        rows.reserveCapacity(result.rowCount)
        var overflow: Int?
        for index in 0..<result.rowCount { rows.append(try reader.row(index, plan, overflow: &overflow)) }
        try plan.checkOverflow(overflow)
        return rows
    }

    static let realSumSavepoint = "strata_aggregate"

    /// Runs an aggregate statement that sums reals under a savepoint, in one round trip
    /// (`SAVEPOINT`, the statement, `RELEASE`). PostgreSQL refuses a `float8` sum that passes the
    /// finite range (SQLSTATE 22003) where the reference gives infinity: then the savepoint is
    /// rolled back, so that the snapshot's transaction stays usable, and nil is returned for the
    /// caller to fold the rows itself. Any other failure is thrown, the savepoint rolled back too.
    private static func runRealSums(
        _ sql: String, _ parameters: [PGParameter], on session: PostgresSession
    ) throws(StrataError) -> PGResult? {
        let (results, failure) = session.runPipelineRaw([
            .init(sql: "SAVEPOINT \(realSumSavepoint)"), .init(sql: sql, parameters: parameters),
            .init(sql: "RELEASE SAVEPOINT \(realSumSavepoint)"),
        ])
        guard let failure else { return results[1] }
        let undo = "ROLLBACK TO SAVEPOINT \(realSumSavepoint); RELEASE SAVEPOINT \(realSumSavepoint)"
        if failure.sqlState == "22003" && results.count == 1 {
            try session.runScript(undo)
            return nil
        }
        if !results.isEmpty { try? session.runScript(undo) }
        throw session.error(failure, sql: results.isEmpty ? "SAVEPOINT \(realSumSavepoint)" : sql)
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

    /// Group `index`; an integer sum past `Int64` is noted in `overflow`
    /// (``AggregatePlan/row(value:count:sum:overflow:)``).
    /// - Throws: `.storeCorrupt` when a value does not decode as its column's type.
    func row(_ index: Int, _ plan: AggregatePlan, overflow: inout Int?) throws(StrataError) -> AggregateRow {
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
        /// Exact for integers: `numeric` read as 128 bits (a sum of `Int64`s fits).
        func sum(_ column: Int) throws(StrataError) -> AggregatePlan.EngineSum {
            defer { cell += 1 }
            if result.isNull(index, cell) { return .integer(0) }
            guard table.decoding[column].storageClass == .integer else {
                // NaN is a sum's result, not damage: +infinity and −infinity added.
                guard let total = result.double(index, cell) else {
                    throw bad("a sum of \(table.entity.columns[column].name)")
                }
                return .real(total)
            }
            guard let digits = result.text(index, cell), let total = Int128(digits) else { throw bad("a sum") }
            return .integer(total)
        }
        return try plan.row(value: next, count: count, sum: sum, overflow: &overflow)
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
