import Foundation
import StrataStorage

/// Applies an inferred migration's steps with DDL, inside the open's `BEGIN IMMEDIATE`.
///
/// Laid out as the schema the plan leads to (`tables`, `joins`: that version's). Rows are read
/// by column name (see ``SQLiteTableLayout/selectList``), so a column added by
/// `ALTER TABLE … ADD COLUMN` at the end of the table serves a model that declares it anywhere.
/// A change that `ALTER TABLE` cannot express (a column's `NOT NULL` added or removed) rebuilds
/// the entity's table once, with every column step of that entity folded into the copy (see
/// `SQLiteMigration+Rebuild.swift`).
struct SQLiteMigration: SchemaMigrationApplier {
    let connection: SQLiteConnection
    let tables: [SQLiteTableLayout]
    let joins: [SQLiteJoinLayout]

    func apply(
        _ plan: SchemaMigrationPlan, to schema: StoreSchema, progress: MigrationRowProgress
    ) throws(StrataError) {
        let rebuilds = Rebuilds(plan)
        for (position, step) in plan.steps.enumerated() {
            if let entity = rebuilds.entity(absorbing: step) {
                if rebuilds.isLast(position, of: entity) {
                    try rebuild(entity, plan: plan, schema: schema, progress: progress)
                }
                continue
            }
            try apply(step, plan: plan, schema: schema)
        }
        try setMetadata("schema_version", .integer(Int64(plan.target.version)))
        try setMetadata(SQLiteEngine.recordedSchemaKey, .text(try plan.target.jsonText()))
    }

    private func apply(_ step: SchemaMigrationStep, plan: SchemaMigrationPlan, schema: StoreSchema) throws(StrataError)
    {
        switch step {
        case .addEntity(let entity):
            let layout = try table(entity.name)
            try connection.execute(layout.createTable(schema: schema))
            for index in layout.createIndexes() { try connection.execute(index) }
            try run("INSERT INTO strata_key_counters (entity, next_key) VALUES (?1, 1)", [.text(entity.name)])
        case .dropEntity(let name):
            try connection.execute("DROP TABLE \(quoted(name))")
            try run("DELETE FROM strata_key_counters WHERE entity = ?1", [.text(name)])
        case .renameEntity(let from, let to):
            try renameEntity(from: from, to: to)
        case .addAttribute(let entity, let attribute, let fill):
            try addColumn(entity: entity, name: attribute.name, fill: fill, schema: schema)
        case .dropAttribute(let entity, let attribute):
            try connection.execute("ALTER TABLE \(quoted(entity)) DROP COLUMN \(quoted(attribute))")
        case .renameAttribute(let entity, let from, let to):
            try connection.execute("ALTER TABLE \(quoted(entity)) RENAME COLUMN \(quoted(from)) TO \(quoted(to))")
        case .changeDefault, .changeDeleteRule, .reorderColumns:
            break // Defaults are written by the core, rules enforced by it; columns are read by name.
        case .addRelationship(let entity, let relationship):
            guard relationship.kind == .toOne else { break } // A to-many or its join stores it.
            try addColumn(entity: entity, name: relationship.name, fill: .null, schema: schema)
            try createEngineIndexes(of: entity, column: relationship.name, plan: plan)
        case .dropRelationship(let entity, let relationship):
            guard relationship.kind == .toOne else { break }
            // DROP COLUMN refuses an indexed column: the engine's index of the key goes first.
            for index in try indexes(of: entity, covering: relationship.name) {
                try connection.execute("DROP INDEX \(quoted(index))")
            }
            try connection.execute("ALTER TABLE \(quoted(entity)) DROP COLUMN \(quoted(relationship.name))")
        case .makeOptional, .makeRequired:
            // Rebuilds absorb these; reaching here means the plan and the rebuild disagree.
            throw .misuse("the SQLite migration reached \(step) outside its table rebuild")
        case .addIndex(let entity, let index), .addUniqueConstraint(let entity, let index):
            if index.isUnique { try checkUnique(entity: entity, attributes: index.attributes) }
            let layout = try table(entity)
            guard let declared = layout.entity.indexes.firstIndex(where: { $0.name == index.name }) else {
                throw .misuse("the model's schema has no index \(index.name) on \(entity)")
            }
            try connection.execute(layout.createIndexes()[declared])
        case .dropIndex(_, let name), .dropUniqueConstraint(_, let name):
            try connection.execute("DROP INDEX \(quoted(name))")
        case .addJoin(let join):
            for statement in try self.join(join.name).create(schema: schema) { try connection.execute(statement) }
        case .dropJoin(let name):
            try connection.execute("DROP TABLE \(quoted(name))")
        case .renameJoin(let from, let to):
            try renameJoin(from: from, to: to, schema: schema)
        case .swapJoinSides(let name):
            try swapJoinSides(name, schema: schema)
        }
    }

    /// Renames the table (SQLite rewrites the `REFERENCES` of other tables and joins to it), its
    /// key counter, and the engine's indexes named after it (the indexes of its to-one keys;
    /// declared indexes are dropped and re-created by the plan, whose names carry the entity's).
    private func renameEntity(from: String, to: String) throws(StrataError) {
        try connection.execute("ALTER TABLE \(quoted(from)) RENAME TO \(quoted(to))")
        try run("UPDATE strata_key_counters SET entity = ?2 WHERE entity = ?1", [.text(from), .text(to)])
        for (name, sql) in try indexDefinitions(of: to) where name.hasPrefix(from + "_") {
            let renamed = to + name.dropFirst(from.count)
            guard let range = sql.range(of: quoted(name)) else { continue }
            try connection.execute("DROP INDEX \(quoted(name))")
            try connection.execute(sql.replacingCharacters(in: range, with: quoted(renamed)))
        }
    }

    /// Renames a join table, keeping its links; its index is re-created under the new name.
    private func renameJoin(from: String, to: String, schema: StoreSchema) throws(StrataError) {
        let layout = try join(to)
        try connection.execute("ALTER TABLE \(quoted(from)) RENAME TO \(quoted(to))")
        for (name, _) in try indexDefinitions(of: to) { try connection.execute("DROP INDEX \(quoted(name))") }
        for statement in layout.create(schema: schema).dropFirst() { try connection.execute(statement) }
    }

    /// Rebuilds a join with its sides swapped: every (left, right) link becomes (right, left),
    /// in the model's exact table and index definitions.
    private func swapJoinSides(_ name: String, schema: StoreSchema) throws(StrataError) {
        let layout = try join(name)
        let old = name + "__swapping"
        try connection.execute("ALTER TABLE \(quoted(name)) RENAME TO \(quoted(old))")
        for (index, _) in try indexDefinitions(of: old) { try connection.execute("DROP INDEX \(quoted(index))") }
        for statement in layout.create(schema: schema) { try connection.execute(statement) }
        try connection.execute(
            "INSERT INTO \(quoted(name)) (\"left\", \"right\") SELECT \"right\", \"left\" FROM \(quoted(old))")
        try connection.execute("DROP TABLE \(quoted(old))")
    }

    /// `ALTER TABLE … ADD COLUMN` with the model's definition; a required column gets `fill` as
    /// its `DEFAULT` (SQLite needs one for `NOT NULL`), an optional one is filled by an `UPDATE`.
    private func addColumn(
        entity: String, name: String, fill: StoredValue, schema: StoreSchema
    ) throws(StrataError) {
        let column = try self.column(name, of: entity)
        var definition = SQLiteTableLayout.columnDefinition(column, schema: schema)
        if !column.isOptional { definition += " DEFAULT \(Self.literal(fill))" }
        try connection.execute("ALTER TABLE \(quoted(entity)) ADD COLUMN \(definition)")
        if column.isOptional, fill != .null {
            try run("UPDATE \(quoted(entity)) SET \(quoted(name)) = ?1", [fill])
        }
    }

    /// Creates the engine's own indexes (not recorded in the model's schema, such as a to-one
    /// key's) over exactly `column` of `entity`.
    private func createEngineIndexes(of entity: String, column: String, plan: SchemaMigrationPlan) throws(StrataError) {
        let layout = try table(entity)
        let recorded = Set(plan.target.entity(named: entity)?.indexes.map(\.name) ?? [])
        for (position, index) in layout.entity.indexes.enumerated()
        where !recorded.contains(index.name) && index.columns.map({ layout.entity.columns[$0].name }) == [column] {
            try connection.execute(layout.createIndexes()[position])
        }
    }

    /// Refuses a unique constraint that existing rows break (nulls never clash), naming the entity
    /// and attributes, and in its cause the first clashing rows and their values.
    func checkUnique(entity: String, attributes: [String]) throws(StrataError) {
        let columns = attributes.map(quoted).joined(separator: ", ")
        let present = attributes.map { "\(quoted($0)) IS NOT NULL" }.joined(separator: " AND ")
        let values = attributes.map { "quote(\(quoted($0)))" }.joined(separator: " || ', ' || ")
        // The group of the lowest key: its keys (in order), a tab, then its values as SQL literals.
        let clash = try connection.queryText(
            """
            SELECT group_concat(id) || char(9) || \(values) FROM \
            (SELECT id, \(columns) FROM \(quoted(entity)) WHERE \(present) ORDER BY id) \
            GROUP BY \(columns) HAVING count(*) > 1 ORDER BY min(id) LIMIT 1
            """)
        guard let clash else { return }
        let parts = clash.split(separator: "\t", maxSplits: 1).map(String.init)
        let keys = parts.first?.split(separator: ",").compactMap { Int64($0) } ?? []
        throw .constraintViolation(
            entity: entity, attributes: attributes,
            native: MigrationUniqueClash.cause(
                engine: "sqlite", code: Int(SQLiteResultCode.constraintUnique), entity: entity, attributes: attributes,
                keys: keys, values: [parts.count > 1 ? parts[1] : "?"]))
    }

    func table(_ name: String) throws(StrataError) -> SQLiteTableLayout {
        guard let layout = tables.first(where: { $0.entity.name == name }) else {
            throw .misuse("the model's schema has no entity \(name)")
        }
        return layout
    }

    private func join(_ name: String) throws(StrataError) -> SQLiteJoinLayout {
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

    func run(_ sql: String, _ values: [StoredValue]) throws(StrataError) {
        let statement = try connection.statement(sql)
        for (offset, value) in values.enumerated() { try statement.bind(value, at: Int32(offset + 1)) }
        try statement.run()
    }

    /// The first column of every row of a query, as text.
    func strings(_ sql: String, _ values: [StoredValue]) throws(StrataError) -> [String] {
        let statement = try connection.statement(sql)
        defer { statement.reset() }
        for (offset, value) in values.enumerated() { try statement.bind(value, at: Int32(offset + 1)) }
        var result: [String] = []
        while try statement.step() { result.append(statement.text(at: 0) ?? "") }
        return result
    }

    /// The name and `CREATE INDEX` text of every explicit index on a table.
    func indexDefinitions(of table: String) throws(StrataError) -> [(name: String, sql: String)] {
        let statement = try connection.statement(
            "SELECT name, sql FROM sqlite_schema WHERE type = 'index' AND tbl_name = ?1 AND sql IS NOT NULL")
        defer { statement.reset() }
        try statement.bind(.text(table), at: 1)
        var result: [(name: String, sql: String)] = []
        while try statement.step() { result.append((statement.text(at: 0) ?? "", statement.text(at: 1) ?? "")) }
        return result
    }

    /// The explicit indexes of a table that include `column`.
    private func indexes(of table: String, covering column: String) throws(StrataError) -> [String] {
        try strings(
            """
            SELECT DISTINCT list.name FROM pragma_index_list(?1) AS list, pragma_index_info(list.name) AS info \
            WHERE list.origin = 'c' AND info.name = ?2
            """, [.text(table), .text(column)])
    }

    private func setMetadata(_ key: String, _ value: StoredValue) throws(StrataError) {
        try run("INSERT OR REPLACE INTO strata_metadata (key, value) VALUES (?1, ?2)", [.text(key), value])
    }

    /// A constant SQL literal for a `DEFAULT` clause.
    static func literal(_ value: StoredValue) -> String {
        switch value {
        case .null: "NULL"
        case .integer(let number): "\(number)"
        case .real(let number): number.isFinite ? "\(number)" : (number > 0 ? "9e999" : "-9e999")
        case .text(let text): "'\(text.replacingOccurrences(of: "'", with: "''"))'"
        case .blob(let bytes): "X'\(bytes.map { String(format: "%02X", $0) }.joined())'"
        }
    }
}
