import StrataStorage

/// The SQL text of one read, its parameters and the membership lists it reads.
///
/// Built here, apart from running it, so that tests can assert the exact SQL of a plan and its
/// query plan (`EXPLAIN QUERY PLAN`, see ``SQLiteReader/queryPlan(for:)``).
struct SQLiteQuery: Sendable, Equatable {
    /// The statement, with a `?` per parameter.
    var sql: String
    /// The values bound to the `?`s, in order.
    var parameters: [StoredValue]
    /// Constants for `temp.strata_members` (see ``SQLiteFilterSQL``); empty for most queries.
    var membershipLists: [[StoredValue]] = []

    /// The rows of `plan`: filter, sort (then primary key), limit and offset.
    ///
    /// Any offset and limit are accepted: a negative limit selects no row and a negative offset
    /// skips none (as ``Strata/FetchPlan/window(of:)`` does); both are bound, so `Int.max` is no
    /// overflow.
    /// - Parameter variableLimit: the connection's parameter limit; memberships move to the
    ///   temporary table when the statement would pass it.
    /// - Throws: `.misuse` when the plan names columns the entity lacks.
    static func select(
        _ plan: FetchPlan, table: SQLiteTableLayout, variableLimit: Int
    ) throws(StrataError) -> SQLiteQuery {
        let hasWindow = plan.limit != nil || plan.offset > 0
        var query = SQLiteQuery(sql: "SELECT \(table.selectList) FROM \(table.table)", parameters: [])
        if let filter = plan.filter {
            try query.appendWhere(filter, entity: table.entity, variableLimit: variableLimit - (hasWindow ? 2 : 0))
        }
        // A plan that allows any order gets SQLite's own (no sorter for an `IN` over an index).
        if plan.allowsAnyOrder { return query }
        query.sql += " ORDER BY "
        for key in plan.sort {
            guard table.entity.columns.indices.contains(key.column) else {
                throw .misuse(
                    """
                    sort names column \(key.column), but \(table.entity.name) has \(table.entity.columns.count) \
                    columns
                    """
                )
            }
            query.sql += quoted(table.entity.columns[key.column].name) + (key.ascending ? " ASC, " : " DESC, ")
        }
        query.sql += "\"id\" ASC"
        if hasWindow {
            query.sql += " LIMIT ? OFFSET ?"
            // Int is Int64 here; SQLite takes a negative limit as "no limit", so clamp it to 0.
            query.parameters.append(.integer(plan.limit.map { Int64(max($0, 0)) } ?? -1))
            query.parameters.append(.integer(Int64(max(plan.offset, 0))))
        }
        return query
    }

    /// The number of rows of `table` that `filter` selects.
    static func count(
        _ table: SQLiteTableLayout, filter: Filter?, variableLimit: Int
    ) throws(StrataError) -> SQLiteQuery {
        var query = SQLiteQuery(sql: "SELECT count(*) FROM \(table.table)", parameters: [])
        if let filter { try query.appendWhere(filter, entity: table.entity, variableLimit: variableLimit) }
        return query
    }

    mutating func appendWhere(_ filter: Filter, entity: EntitySchema, variableLimit: Int) throws(StrataError) {
        var translated = try SQLiteFilterSQL(filter, entity: entity)
        if parameters.count + translated.parameters.count > variableLimit {
            translated = try SQLiteFilterSQL(filter, entity: entity, membershipsInTable: true)
        }
        sql += " WHERE " + translated.sql
        parameters += translated.parameters
        membershipLists = translated.membershipLists
    }
}
