import StrataStorage

/// Fetch plans run over one state: the filter tested row by row with the reference semantics
/// (``StrataStorage/FilterEvaluator``), then the plan's order and window.
struct MemoryScan {
    /// The snapshot read.
    let state: MemoryState

    /// The rows `plan` selects, in its order (any order when it allows any).
    /// - Throws: `.misuse` for an unknown entity, or a filter or sort naming a column the entity
    ///   does not have.
    func rows(for plan: FetchPlan) throws(StrataError) -> [StoredRow] {
        let entity = try state.entity(plan.entity)
        try Self.check(plan, entity)
        let table = state.tables[plan.entity]
        var rows: [StoredRow] = []
        // A plan in key order with a limit needs only the first `offset + limit` rows of a walk in
        // key order: the walk stops there, so `fetchLimit: 3` does not read the whole table.
        // (A window past `Int.max` rows has no end to stop at.)
        let needed = plan.sort.isEmpty ? plan.limit.flatMap { Self.end(offset: plan.offset, limit: $0) } : nil
        // The rows tree walks in key order: only a scan of candidates from a lookup needs sorting
        // when the plan asks for key order.
        var inKeyOrder = true
        if let filter = plan.filter {
            if let candidates = table.candidates(filter) {
                inKeyOrder = candidates.isInKeyOrder
                let stopsAt = inKeyOrder ? needed : nil
                // Made at the first candidate: a range that holds no row costs no evaluator.
                var evaluator: FilterEvaluator?
                table.walk(
                    candidates,
                    while: { key, row in
                        if evaluator == nil { evaluator = FilterEvaluator(filter) }
                        if evaluator?.matches(row.values, key: key) == true {
                            rows.append(StoredRow(key: key, version: row.version, values: row.values))
                        }
                        return stopsAt.map { rows.count < $0 } ?? true
                    })
            } else {
                let evaluator = FilterEvaluator(filter)
                for (key, row) in table.rows where evaluator.matches(row.values, key: key) {
                    if let needed, rows.count >= needed { break }
                    rows.append(StoredRow(key: key, version: row.version, values: row.values))
                }
            }
        } else {
            rows.reserveCapacity(min(table.rows.count, needed ?? .max))
            for (key, row) in table.rows {
                if let needed, rows.count >= needed { break }
                rows.append(StoredRow(key: key, version: row.version, values: row.values))
            }
        }
        if plan.allowsAnyOrder { return rows }
        if !plan.sort.isEmpty {
            plan.sortRows(&rows)
        } else if !inKeyOrder {
            rows.sort { $0.key < $1.key }
        }
        if plan.offset <= 0 && plan.limit == nil { return rows }
        return Array(plan.window(of: rows))
    }

    /// Where a window of `limit` rows after `offset` ends; nil when that is past `Int.max`.
    private static func end(offset: Int, limit: Int) -> Int? {
        let (end, overflow) = max(offset, 0).addingReportingOverflow(max(limit, 0))
        return overflow ? nil : end
    }

    /// Calls `body` with each row `plan` selects.
    /// - Throws: the errors of ``rows(for:)``.
    func forEachRow(for plan: FetchPlan, _ body: (StoredRow) -> Void) throws(StrataError) {
        for row in try rows(for: plan) { body(row) }
    }

    /// How many rows of entity `number` match `filter`.
    /// - Throws: `.misuse` for an unknown entity or a filter naming a column it does not have.
    func count(entity number: Int, filter: Filter?) throws(StrataError) -> Int {
        let entity = try state.entity(number)
        let table = state.tables[number]
        guard let filter else { return table.rows.count }
        try Self.check(filter, entity)
        guard let candidates = table.candidates(filter) else {
            let evaluator = FilterEvaluator(filter)
            var count = 0
            for (key, row) in table.rows where evaluator.matches(row.values, key: key) { count += 1 }
            return count
        }
        // A filter that is one range of a lookup or of the keys is counted without reading a row.
        if candidates.isExact(for: filter) { return table.count(candidates) }
        var evaluator: FilterEvaluator?
        var count = 0
        table.forEach(candidates) { key, row in
            if evaluator == nil { evaluator = FilterEvaluator(filter) }
            if evaluator?.matches(row.values, key: key) == true { count += 1 }
        }
        return count
    }

    /// Throws `.misuse` when `plan` sorts by or filters on a column `entity` does not have.
    static func check(_ plan: FetchPlan, _ entity: EntitySchema) throws(StrataError) {
        for key in plan.sort where !entity.columns.indices.contains(key.column) {
            let count = entity.columns.count
            throw .misuse("the fetch plan sorts \(entity.name) by column \(key.column), but it has \(count) columns")
        }
        if let filter = plan.filter { try check(filter, entity) }
    }

    /// Throws `.misuse` when `filter` names a column `entity` does not have.
    static func check(_ filter: Filter, _ entity: EntitySchema) throws(StrataError) {
        if let column = filter.columns.first(where: { !entity.columns.indices.contains($0) }) {
            throw .misuse(
                "the filter names column \(column) of \(entity.name), but it has \(entity.columns.count) columns")
        }
    }
}
