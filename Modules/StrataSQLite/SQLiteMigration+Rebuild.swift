import StrataStorage

/// Table rebuilds: what `ALTER TABLE` cannot do (a column's `NOT NULL` added or removed).
///
/// The entity's table is made again under a temporary name with the model's exact `CREATE TABLE`
/// text, the rows copied in key order in batches (reporting progress), the old table dropped and
/// the new one renamed into place, then its indexes re-created; all inside the open transaction.
/// `PRAGMA foreign_keys` is off on Strata's connections, so dropping a table that others
/// reference is allowed, and their `REFERENCES` name the table, which the rename brings back.
///
/// Every column step of a rebuilt entity (columns added, dropped, made optional or required,
/// to-one keys added or dropped) is folded into the one copy, which runs at the place of the
/// entity's last such step: after the renames and drops before it, and before the index, unique
/// and join additions after it, which see the final rows.
extension SQLiteMigration {
    /// Rows copied per statement, and between two progress reports.
    static let rebuildBatch = 5_000

    /// Which entities a plan rebuilds, and which steps the rebuilds absorb.
    struct Rebuilds {
        /// Rebuilt entity → the position of its last absorbed step.
        private var last: [String: Int] = [:]

        init(_ plan: SchemaMigrationPlan) {
            var rebuilt: Set<String> = []
            for step in plan.steps {
                switch step {
                case .makeOptional(let entity, _), .makeRequired(let entity, _, _): rebuilt.insert(entity)
                default: break
                }
            }
            for (position, step) in plan.steps.enumerated() {
                if let entity = Self.columnEntity(of: step), rebuilt.contains(entity) { last[entity] = position }
            }
        }

        /// The rebuilt entity whose copy does what `step` does, or nil when it is applied alone.
        func entity(absorbing step: SchemaMigrationStep) -> String? {
            guard let entity = Self.columnEntity(of: step), last[entity] != nil else { return nil }
            return entity
        }

        /// Whether the step at `position` is the last one `entity`'s rebuild absorbs.
        func isLast(_ position: Int, of entity: String) -> Bool { last[entity] == position }

        /// The entity whose stored columns a step changes, for the steps a rebuild can absorb.
        private static func columnEntity(of step: SchemaMigrationStep) -> String? {
            switch step {
            case .addAttribute(let entity, _, _), .dropAttribute(let entity, _), .makeOptional(let entity, _),
                .makeRequired(let entity, _, _), .changeDefault(let entity, _, _), .reorderColumns(let entity, _),
                .addRelationship(let entity, _), .dropRelationship(let entity, _):
                entity
            default:
                nil
            }
        }
    }

    /// Rebuilds `entity`'s table as the model declares it, applying every column step of the
    /// plan for it in the copy.
    func rebuild(
        _ entity: String, plan: SchemaMigrationPlan, schema: StoreSchema, progress: MigrationRowProgress
    ) throws(StrataError) {
        let layout = try table(entity)
        let temporary = entity + "__new"
        guard
            try connection.queryInt64(
                "SELECT count(*) FROM sqlite_schema WHERE name = ?1 COLLATE NOCASE", [.text(temporary)]) == 0
        else {
            throw .misuse(
                "\(entity) cannot be rebuilt for the migration: the store already has a table named \(temporary)")
        }
        let present = Set(try strings("SELECT name FROM pragma_table_info(?1)", [.text(entity)]))
        let oldIndexes = Set(try indexDefinitions(of: entity).map(\.name))
        var fills: [StoredValue] = []
        var sources: [String] = []
        for column in layout.entity.columns {
            switch Self.source(of: column.name, entity: entity, in: plan.steps) {
            case .copied:
                guard present.contains(column.name) else {
                    throw .misuse("\(entity).\(column.name) is neither in the store nor added by the migration")
                }
                sources.append(quoted(column.name))
            case .filled(let fill):
                fills.append(fill)
                sources.append("?\(fills.count + 1)")
            case .filledWhereNull(let fill):
                fills.append(fill)
                sources.append("coalesce(\(quoted(column.name)), ?\(fills.count + 1))")
            }
        }
        try connection.execute(layout.createTable(schema: schema, named: temporary))
        try copyRows(
            from: entity, to: temporary, columns: layout.selectList, sources: sources, fills: fills,
            progress: progress)
        try connection.execute("DROP TABLE \(quoted(entity))")
        try connection.execute("ALTER TABLE \(quoted(temporary)) RENAME TO \(quoted(entity))")
        // Indexes the old table had, and the engine's own (a to-one key's); the plan's own index
        // and unique additions come after this step.
        let added = Set(
            plan.steps.compactMap { step -> String? in
                switch step {
                case .addIndex(entity, let index), .addUniqueConstraint(entity, let index): index.name
                default: nil
                }
            })
        let recorded = Set(plan.target.entity(named: entity)?.indexes.map(\.name) ?? [])
        for (index, statement) in zip(layout.entity.indexes, layout.createIndexes())
        where !recorded.contains(index.name) || (oldIndexes.contains(index.name) && !added.contains(index.name)) {
            // The copy may have made rows clash (nulls made required with one default): refuse
            // naming the constraint, as an added one is, before SQLite's own failure.
            if index.isUnique {
                try checkUnique(entity: entity, attributes: index.columns.map { layout.entity.columns[$0].name })
            }
            try connection.execute(statement)
        }
    }

    /// Where a column's values come from in a rebuild.
    private enum ColumnSource {
        case copied
        case filled(StoredValue)
        case filledWhereNull(StoredValue)
    }

    private static func source(of column: String, entity: String, in steps: [SchemaMigrationStep]) -> ColumnSource {
        var source = ColumnSource.copied
        for step in steps {
            switch step {
            case .addAttribute(entity, let attribute, let fill) where attribute.name == column:
                source = .filled(fill)
            case .addRelationship(entity, let relationship) where relationship.name == column:
                source = .filled(.null)
            case .makeRequired(entity, column, let fill):
                if case .copied = source { source = .filledWhereNull(fill) }
            default:
                break
            }
        }
        return source
    }

    /// Copies every row of `old` into `new` in key order, `rebuildBatch` rows per statement,
    /// reporting the rows done after each batch.
    private func copyRows(
        from old: String, to new: String, columns: String, sources: [String], fills: [StoredValue],
        progress: MigrationRowProgress
    ) throws(StrataError) {
        let total = Int(try connection.queryInt64("SELECT count(*) FROM \(quoted(old))") ?? 0)
        let select = (["\"id\"", "\"version\""] + sources).joined(separator: ", ")
        let insert = try connection.statement(
            """
            INSERT INTO \(quoted(new)) (\(columns)) SELECT \(select) FROM \(quoted(old)) WHERE "id" > ?1 \
            ORDER BY "id" LIMIT \(Self.rebuildBatch)
            """)
        var done = 0
        var after = Int64.min
        while true {
            try insert.bind(after, at: 1)
            for (offset, fill) in fills.enumerated() { try insert.bind(fill, at: Int32(offset + 2)) }
            try insert.run()
            let copied = Int(insert.changes)
            done += copied
            if copied > 0 {
                after = try connection.queryInt64("SELECT max(\"id\") FROM \(quoted(new))") ?? after
            }
            if copied < Self.rebuildBatch {
                progress.rowsMigrated(done, of: total)
                return
            }
            progress.rowsMigrated(done, of: total)
        }
    }
}
