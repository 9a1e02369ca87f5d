import Foundation
import StrataStorage

/// Applies an inferred migration's steps with DDL, inside the open's `BEGIN IMMEDIATE`.
///
/// Rows are read by column name (see ``SQLiteTableLayout/selectList``), so a column added by
/// `ALTER TABLE … ADD COLUMN` at the end of the table serves a model that declares it anywhere.
/// Not yet applied (they throw `.misuse`, and the transaction rolls back): optionality changes
/// and relationship additions or removals, which need a table rebuild.
struct SQLiteMigration: SchemaMigrationApplier {
    let connection: SQLiteConnection
    let tables: [SQLiteTableLayout]
    let joins: [SQLiteJoinLayout]

    func apply(
        _ plan: SchemaMigrationPlan, to schema: StoreSchema, progress: MigrationRowProgress
    ) throws(StrataError) {
        for step in plan.steps { try apply(step, schema: schema) }
        try setMetadata("schema_version", .integer(Int64(schema.version)))
        try setMetadata(SQLiteEngine.recordedSchemaKey, .text(try plan.target.jsonText()))
    }

    private func apply(_ step: SchemaMigrationStep, schema: StoreSchema) throws(StrataError) {
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
            try connection.execute("ALTER TABLE \(quoted(from)) RENAME TO \(quoted(to))")
            try run("UPDATE strata_key_counters SET entity = ?2 WHERE entity = ?1", [.text(from), .text(to)])
        case .addAttribute(let entity, let attribute, let fill):
            try addColumn(entity: entity, name: attribute.name, fill: fill)
        case .dropAttribute(let entity, let attribute):
            try connection.execute("ALTER TABLE \(quoted(entity)) DROP COLUMN \(quoted(attribute))")
        case .renameAttribute(let entity, let from, let to):
            try connection.execute("ALTER TABLE \(quoted(entity)) RENAME COLUMN \(quoted(from)) TO \(quoted(to))")
        case .changeDefault, .changeDeleteRule, .reorderColumns:
            break // Defaults are written by the core, rules enforced by it; columns are read by name.
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
            guard let layout = joins.first(where: { $0.join.name == join.name }) else {
                throw .misuse("the model's schema has no join \(join.name)")
            }
            for statement in layout.create(schema: schema) { try connection.execute(statement) }
        case .dropJoin(let name):
            try connection.execute("DROP TABLE \(quoted(name))")
        case .makeOptional, .makeRequired, .addRelationship, .dropRelationship, .renameJoin:
            throw .misuse("the SQLite engine cannot apply this migration step yet (it needs a table rebuild): \(step)")
        }
    }

    /// `ALTER TABLE … ADD COLUMN` with the model's type; a required column gets `fill` as its
    /// `DEFAULT` (SQLite needs one for `NOT NULL`), an optional one is filled by an `UPDATE`.
    private func addColumn(entity: String, name: String, fill: StoredValue) throws(StrataError) {
        let layout = try table(entity)
        guard let column = layout.entity.columns.first(where: { $0.name == name }) else {
            throw .misuse("the model's schema has no column \(name) on \(entity)")
        }
        var definition = "\(quoted(name)) \(SQLiteTableLayout.sqlType(column.type.storageClass))"
        if !column.isOptional { definition += " NOT NULL DEFAULT \(Self.literal(fill))" }
        try connection.execute("ALTER TABLE \(quoted(entity)) ADD COLUMN \(definition)")
        if column.isOptional, fill != .null {
            try run("UPDATE \(quoted(entity)) SET \(quoted(name)) = ?1", [fill])
        }
    }

    /// Refuses a unique constraint that existing rows break (nulls never clash), naming the keys.
    private func checkUnique(entity: String, attributes: [String]) throws(StrataError) {
        let columns = attributes.map(quoted).joined(separator: ", ")
        let present = attributes.map { "\(quoted($0)) IS NOT NULL" }.joined(separator: " AND ")
        let clashes =
            try connection.queryInt64(
                """
                SELECT count(*) FROM (SELECT 1 FROM \(quoted(entity)) WHERE \(present) GROUP BY \(columns) \
                HAVING count(*) > 1)
                """) ?? 0
        if clashes > 0 { throw .constraintViolation(entity: entity, attributes: attributes) }
    }

    private func table(_ name: String) throws(StrataError) -> SQLiteTableLayout {
        guard let layout = tables.first(where: { $0.entity.name == name }) else {
            throw .misuse("the model's schema has no entity \(name)")
        }
        return layout
    }

    private func run(_ sql: String, _ values: [StoredValue]) throws(StrataError) {
        let statement = try connection.statement(sql)
        for (offset, value) in values.enumerated() { try statement.bind(value, at: Int32(offset + 1)) }
        try statement.run()
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
