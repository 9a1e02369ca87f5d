import StrataStorage

/// Applies an inferred migration's steps inside the open's transaction (design notes §11).
///
/// Laid out as the schema the plan leads to (`tables`, `joins`: that version's). PostgreSQL's DDL
/// is transactional, so every step is a plain `ALTER`/`CREATE`/`DROP` in the open's transaction
/// and a failure anywhere leaves the store exactly as it was (the open rolls back). No value is
/// spliced into SQL: fills are `UPDATE … SET c = $1` (see `PostgresMigration+Rows.swift`). Rows
/// are read by column name, so a column added at the end of a table serves a model that declares
/// it anywhere, and reordering columns changes nothing stored.
struct PostgresMigration: SchemaMigrationApplier {
    let session: PostgresSession
    /// The store's schema name, unquoted.
    let schemaName: String
    let names: PostgresStoreNames
    let tables: [PostgresTableLayout]
    let joins: [PostgresJoinLayout]

    init(session: PostgresSession, schemaName: String, schema: StoreSchema) {
        self.session = session
        self.schemaName = schemaName
        names = PostgresStoreNames(schema: schemaName)
        tables = schema.entities.map { PostgresTableLayout(entity: $0, schemaName: schemaName) }
        joins = schema.joins.map { PostgresJoinLayout(join: $0, schemaName: schemaName) }
    }

    func apply(
        _ plan: SchemaMigrationPlan, to schema: StoreSchema, progress: MigrationRowProgress
    ) throws(StrataError) {
        for step in plan.steps { try apply(step, plan: plan, progress: progress) }
        try session.run(
            "UPDATE \(names.metadata) SET value = $2 WHERE key = $1",
            [.rawText("schema_version"), .rawText(String(plan.target.version))])
        try session.run(
            """
            INSERT INTO \(names.metadata) (key, value) VALUES ('schema', $1) \
            ON CONFLICT (key) DO UPDATE SET value = excluded.value
            """, [.text(try plan.target.jsonText())])
    }

    private func apply(
        _ step: SchemaMigrationStep, plan: SchemaMigrationPlan, progress: MigrationRowProgress
    ) throws(StrataError) {
        switch step {
        case .addEntity(let entity):
            for statement in try table(entity.name).create(schemaName: schemaName) { try session.run(statement) }
            try session.run(
                "INSERT INTO \(names.keyCounters) (entity, next_key) VALUES ($1, 1)", [.rawText(entity.name)])
        case .dropEntity(let name):
            try session.run("DROP TABLE \(qualified(name))")
            try session.run("DELETE FROM \(names.keyCounters) WHERE entity = $1", [.rawText(name)])
        case .renameEntity(let from, let to):
            try renameEntity(from: from, to: to)
        case .addAttribute(let entity, let attribute, let fill):
            try addColumn(entity: entity, name: attribute.name, fill: fill, progress: progress)
        case .dropAttribute(let entity, let attribute):
            try session.run("ALTER TABLE \(qualified(entity)) DROP COLUMN \(pgQuoted(attribute))")
        case .renameAttribute(let entity, let from, let to):
            try session.run("ALTER TABLE \(qualified(entity)) RENAME COLUMN \(pgQuoted(from)) TO \(pgQuoted(to))")
        case .makeOptional(let entity, let attribute):
            try session.run("ALTER TABLE \(qualified(entity)) ALTER COLUMN \(pgQuoted(attribute)) DROP NOT NULL")
        case .makeRequired(let entity, let attribute, let fill):
            let column = try self.column(attribute, of: entity)
            if fill != .null {
                try checkUniqueAfterFilling(entity: entity, column: column, with: fill)
                try fillColumn(entity: entity, column: column, with: fill, onlyNulls: true, progress: progress)
            }
            try session.run("ALTER TABLE \(qualified(entity)) ALTER COLUMN \(pgQuoted(attribute)) SET NOT NULL")
        case .changeDefault, .changeDeleteRule, .reorderColumns:
            break // Defaults are written by the core, rules enforced by it; columns are read by name.
        case .addRelationship(let entity, let relationship):
            guard relationship.kind == .toOne else { break } // A to-many or its join stores it.
            try addColumn(entity: entity, name: relationship.name, fill: .null, progress: progress)
            try createEngineIndexes(of: entity, column: relationship.name, plan: plan)
        case .dropRelationship(let entity, let relationship):
            guard relationship.kind == .toOne else { break }
            // Dropping the column drops the engine's index of the key with it.
            try session.run("ALTER TABLE \(qualified(entity)) DROP COLUMN \(pgQuoted(relationship.name))")
        case .addIndex(let entity, let index), .addUniqueConstraint(let entity, let index):
            if index.isUnique { try checkUnique(entity: entity, attributes: index.attributes) }
            try session.run(try indexStatement(index.name, of: entity))
        case .dropIndex(_, let name), .dropUniqueConstraint(_, let name):
            try session.run("DROP INDEX \(qualified(name))")
        case .addJoin(let join):
            for statement in try self.join(join.name).create() { try session.run(statement) }
        case .dropJoin(let name):
            try session.run("DROP TABLE \(qualified(name))")
        case .renameJoin(let from, let to):
            try renameJoin(from: from, to: to)
        case .swapJoinSides(let name):
            try swapJoinSides(name, progress: progress)
        }
    }

    /// Renames the table, the indexes named after it (its primary key's `<Entity>_pkey` and the
    /// engine's own, such as a to-one key's `<Entity>_<key>_ref`), so that a unique violation's
    /// index name maps back to the new schema, and its key counter. Declared indexes, whose
    /// recorded names carry the entity's, were dropped before this step and are re-created after it.
    private func renameEntity(from: String, to: String) throws(StrataError) {
        try session.run("ALTER TABLE \(qualified(from)) RENAME TO \(pgQuoted(to))")
        let oldKey = PostgresDerivedName.primaryKey(of: from)
        let indexes = try indexNames(of: to)
        try renameIndex(oldKey, to: PostgresDerivedName.primaryKey(of: to))
        for index in indexes where index != oldKey && index.hasPrefix(from + "_") {
            try renameIndex(index, to: to + index.dropFirst(from.count))
        }
        try session.run(
            "UPDATE \(names.keyCounters) SET entity = $2 WHERE entity = $1", [.rawText(from), .rawText(to)])
    }

    /// `ALTER TABLE … ADD COLUMN` with the model's type, filled by `UPDATE` when `fill` is not
    /// null, then made `NOT NULL` when the model requires it.
    private func addColumn(
        entity: String, name: String, fill: StoredValue, progress: MigrationRowProgress
    ) throws(StrataError) {
        let column = try self.column(name, of: entity)
        try session.run(
            """
            ALTER TABLE \(qualified(entity)) ADD COLUMN \(pgQuoted(name)) \
            \(PostgresTableLayout.sqlType(column.type.storageClass))
            """)
        if fill != .null {
            try fillColumn(entity: entity, column: column, with: fill, onlyNulls: false, progress: progress)
        }
        if !column.isOptional {
            try session.run("ALTER TABLE \(qualified(entity)) ALTER COLUMN \(pgQuoted(name)) SET NOT NULL")
        }
    }

    /// Creates the engine's own indexes (not recorded in the model's schema, such as a to-one
    /// key's) over exactly `column` of `entity`.
    private func createEngineIndexes(of entity: String, column: String, plan: SchemaMigrationPlan) throws(StrataError) {
        let layout = try table(entity)
        let recorded = Set(plan.target.entity(named: entity)?.indexes.map(\.name) ?? [])
        for index in layout.entity.indexes
        where !recorded.contains(index.name) && index.columns.map({ layout.entity.columns[$0].name }) == [column] {
            try session.run(try indexStatement(index.name, of: entity))
        }
    }

    /// The model's `CREATE [UNIQUE] INDEX` statement of one of `entity`'s indexes.
    private func indexStatement(_ name: String, of entity: String) throws(StrataError) -> String {
        let layout = try table(entity)
        guard let position = layout.entity.indexes.firstIndex(where: { $0.name == name }) else {
            throw .misuse("the model's schema has no index \(name) on \(entity)")
        }
        // `create` lists the table first, then its indexes in the entity's order.
        return layout.create(schemaName: schemaName)[position + 1]
    }

    /// `"schema"."name"`: a table or index of the store.
    func qualified(_ name: String) -> String { names.schema + "." + pgQuoted(name) }

    /// Renames an index of the store (an index backing a constraint renames the constraint too).
    func renameIndex(_ name: String, to newName: String) throws(StrataError) {
        try session.run("ALTER INDEX \(qualified(name)) RENAME TO \(pgQuoted(newName))")
    }

    /// The names of every index on one of the store's tables.
    private func indexNames(of table: String) throws(StrataError) -> [String] {
        let result = try session.run(
            """
            SELECT i.relname FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid \
            WHERE x.indrelid = $1::regclass ORDER BY i.relname
            """, [.rawText(qualified(table))])
        return (0..<result.rowCount).compactMap { result.text($0, 0) }
    }

    func table(_ name: String) throws(StrataError) -> PostgresTableLayout {
        guard let layout = tables.first(where: { $0.entity.name == name }) else {
            throw .misuse("the model's schema has no entity \(name)")
        }
        return layout
    }

    func join(_ name: String) throws(StrataError) -> PostgresJoinLayout {
        guard let layout = joins.first(where: { $0.join.name == name }) else {
            throw .misuse("the model's schema has no join \(name)")
        }
        return layout
    }

    private func column(_ name: String, of entity: String) throws(StrataError) -> ColumnSchema {
        guard let column = try table(entity).entity.columns.first(where: { $0.name == name }) else {
            throw .misuse("the model's schema has no column \(name) on \(entity)")
        }
        return column
    }
}
