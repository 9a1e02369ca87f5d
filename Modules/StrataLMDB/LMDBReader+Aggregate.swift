import StrataStorage

/// Aggregates as the reference computes them (``AggregateAccumulator`` over the matching rows, in
/// memory bounded by the number of groups), reading only what the plan uses: the texts and blobs
/// of columns that are neither grouped, aggregated nor filtered on are checked but not decoded.
/// A plan over every row (no filter) is folded over the stored rows in place
/// (``LMDBAggregateFold``); the others over decoded rows.
extension LMDBReader {
    func aggregate(_ plan: AggregatePlan) throws -> [AggregateRow] {
        let entity = try entity(plan.entity)
        let count = entity.layout.classes.count
        let used = plan.groupBy + plan.functions.compactMap(\.column)
        for column in used where !(0..<count).contains(column) {
            throw StrataError.misuse(
                """
                the aggregate names column \(column), but entity \(entity.name) has \(count) columns; name columns \
                by their index in the entity
                """
            )
        }
        if let filter = plan.filter { try Self.checkColumns(of: filter, count: count, entity: entity.name) }
        if LMDBAggregateFold.accepts(plan, layout: entity.layout) {
            // Made here, in the frame that runs the scan, so its scratch keeps away from the stack.
            var fold = LMDBAggregateFold(plan, layout: entity.layout, anchor: .here())
            try reading { txn in
                try txn.scan(entity.dbi, from: IndexKeyCodec.primaryKey(1)) { keyBytes, value in
                    try fold.add(value, key: try IndexKeyCodec.rowKey(keyBytes, entity: entity.name))
                    return true
                }
            }
            return try fold.rows()
        }
        var wanted = ContiguousArray(repeating: false, count: count)
        for column in used { wanted[column] = true }
        for column in plan.filter?.columns ?? [] { wanted[column] = true }
        // Only texts and blobs are worth leaving out.
        let skipsSome = wanted.indices.contains { !wanted[$0] && [.text, .blob].contains(entity.layout.classes[$0]) }
        var accumulator = AggregateAccumulator(plan)
        // The accumulator's overflow reaches the caller as it was thrown, not as a read failure.
        var foldError: StrataError?
        try reading { txn in
            try Self.forEachMatch(txn, entity, plan.filter, anyOrder: true, wanted: skipsSome ? wanted : nil) { row in
                do throws(StrataError) {
                    try accumulator.add(row: row.values)
                } catch {
                    foldError = error
                    return false
                }
                return true
            }
        }
        if let foldError { throw foldError }
        return try accumulator.checkedRows()
    }
}
