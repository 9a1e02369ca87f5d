import StrataStorage

extension LMDBReader {
    /// Throws `.misuse` for a plan whose sort or filter names a column the entity does not
    /// have, so that evaluating it can never index past a row's values.
    static func checkColumns(of plan: FetchPlan, in entity: LMDBCatalog.Entity) throws(StrataError) {
        let count = entity.layout.classes.count
        for key in plan.sort where !(0..<count).contains(key.column) {
            throw .misuse(
                "the fetch plan sorts entity \(entity.name) by column \(key.column), but it has \(count) columns")
        }
        if let filter = plan.filter { try checkColumns(of: filter, count: count, entity: entity.name) }
    }

    /// Throws `.misuse` when `filter` names a column outside `0..<count`.
    static func checkColumns(of filter: Filter, count: Int, entity: String) throws(StrataError) {
        let column: Int?
        switch filter {
        case .constant, .primaryKey: column = nil
        case .compare(let c, _, _), .isNull(let c), .isNotNull(let c), .contains(let c, _), .hasPrefix(let c, _),
            .isIn(let c, _):
            column = c
        case .and(let parts), .or(let parts):
            for part in parts { try checkColumns(of: part, count: count, entity: entity) }
            column = nil
        case .not(let inner):
            try checkColumns(of: inner, count: count, entity: entity)
            column = nil
        }
        if let column, !(0..<count).contains(column) {
            throw .misuse("the fetch plan filters entity \(entity) on column \(column), but it has \(count) columns")
        }
    }
}
