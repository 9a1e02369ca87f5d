import StrataStorage

/// Quotes an SQL identifier: `name` → `"name"`, doubling embedded quotes.
func quoted(_ identifier: String) -> String {
    "\"" + identifier.replacingAll("\"", with: "\"\"") + "\""
}

extension String {
    fileprivate func replacingAll(_ target: Character, with replacement: String) -> String {
        guard contains(target) else { return self }
        var result = ""
        for character in self { if character == target { result += replacement } else { result.append(character) } }
        return result
    }
}

/// Statement kinds with a fixed slot in each connection's statement table.
enum SQLiteStatementSlot {
    static let perOwner = 8
    // Entity statements.
    static let selectByKey = 0, insert = 1, update = 2, touch = 3, delete = 4, versionOf = 5
    // Join statements.
    static let link = 0, unlink = 1, deleteLeft = 2, deleteRight = 3, rightsOfLeft = 4, leftsOfRight = 5
    static let linksOfLefts = 6, linksOfRights = 7
}

/// The SQL text for one entity's table, computed once at open.
///
/// A class so that handing it around per row costs one retain, not one per string.
final class SQLiteTableLayout: Sendable {
    let entity: EntitySchema
    /// This entity's first slot in a connection's statement table (see ``SQLiteStatementSlot``).
    let slotBase: Int
    let table: String
    /// `"id", "version", "c1", …` in row order.
    let selectList: String
    let selectByKey: String
    let insert: String
    let update: String
    /// The quoted column names, in column order.
    let quotedColumns: [String]
    let touch: String
    let delete: String
    let versionOf: String
    let storageClasses: [StorageClass]
    /// What decoding needs per column, in one array (one retain per row).
    let decoding: [ColumnDecoding]

    struct ColumnDecoding: Sendable {
        let storageClass: StorageClass
        let isBool: Bool
        let isOptional: Bool
    }

    init(entity: EntitySchema) {
        self.entity = entity
        slotBase = entity.number * SQLiteStatementSlot.perOwner
        table = quoted(entity.name)
        let columns = entity.columns.map { quoted($0.name) }
        selectList = (["\"id\"", "\"version\""] + columns).joined(separator: ", ")
        selectByKey = "SELECT \(selectList) FROM \(table) WHERE \"id\" = ?1"
        let placeholders = (0..<(columns.count + 2)).map { "?\($0 + 1)" }.joined(separator: ", ")
        insert = "INSERT INTO \(table) (\(selectList)) VALUES (\(placeholders))"
        // ?1 id, ?2 new version, ?3… values, last: expected version.
        let assignments = (["\"version\" = ?2"] + columns.enumerated().map { "\($1) = ?\($0 + 3)" }).joined(
            separator: ", ")
        update = "UPDATE \(table) SET \(assignments) WHERE \"id\" = ?1 AND \"version\" = ?\(columns.count + 3)"
        quotedColumns = columns
        // A version of Int64.max is never incremented (SQLite would turn it into a REAL).
        touch =
            """
            UPDATE \(table) SET \"version\" = \"version\" + 1 WHERE \"id\" = ?1 AND \"version\" = ?2 AND \
            \"version\" < \(Int64.max)
            """
        delete = "DELETE FROM \(table) WHERE \"id\" = ?1 AND \"version\" = ?2"
        versionOf = "SELECT \"version\" FROM \(table) WHERE \"id\" = ?1"
        storageClasses = entity.columns.map(\.type.storageClass)
        decoding = entity.columns.map {
            ColumnDecoding(storageClass: $0.type.storageClass, isBool: $0.type == .bool, isOptional: $0.isOptional)
        }
    }

    /// `CREATE TABLE` for the entity (named `name` instead, for a table being rebuilt).
    /// An update of the version and the given columns only (`?1` id, `?2` new version, then one
    /// parameter per column, then the expected version), for a ``RowWrite/changedColumns``.
    func update(columns changed: [Int]) -> String {
        let assignments = (["\"version\" = ?2"] + changed.enumerated().map { "\(quotedColumns[$1]) = ?\($0 + 3)" })
            .joined(separator: ", ")
        return "UPDATE \(table) SET \(assignments) WHERE \"id\" = ?1 AND \"version\" = ?\(changed.count + 3)"
    }

    func createTable(schema: StoreSchema, named name: String? = nil) -> String {
        let parts =
            ["\"id\" INTEGER PRIMARY KEY", "\"version\" INTEGER NOT NULL"]
            + entity.columns.map { Self.columnDefinition($0, schema: schema) }
        return "CREATE TABLE \(name.map(quoted) ?? table) (\(parts.joined(separator: ", ")))"
    }

    /// A column's definition as `CREATE TABLE` writes it: name, type, `NOT NULL`, `REFERENCES`.
    static func columnDefinition(_ column: ColumnSchema, schema: StoreSchema) -> String {
        var part = "\(quoted(column.name)) \(Self.sqlType(column.type.storageClass))"
        if !column.isOptional { part += " NOT NULL" }
        if column.type == .reference, let target = column.referencedEntity, schema.entities.indices.contains(target) {
            part += " REFERENCES \(quoted(schema.entities[target].name))(\"id\")"
        }
        return part
    }

    /// `CREATE [UNIQUE] INDEX` statements for the entity's indexes.
    func createIndexes() -> [String] {
        entity.indexes.map { index in
            let columns = index.columns.map { quoted(entity.columns[$0].name) }.joined(separator: ", ")
            return "CREATE \(index.isUnique ? "UNIQUE " : "")INDEX \(quoted(index.name)) ON \(table) (\(columns))"
        }
    }

    static func sqlType(_ storageClass: StorageClass) -> String {
        switch storageClass {
        case .integer: "INTEGER"
        case .real: "REAL"
        case .text: "TEXT"
        case .blob: "BLOB"
        }
    }
}

/// The SQL text for one many-to-many join table.
final class SQLiteJoinLayout: Sendable {
    let join: JoinSchema
    /// This join's first slot in a connection's statement table, after every entity's.
    let slotBase: Int
    let table: String
    let link: String
    let unlink: String
    let deleteLeft: String
    let deleteRight: String
    let rightsOfLeft: String
    let leftsOfRight: String
    /// `(left, right)` of every link whose left key is in the JSON array `?1`, by left then right.
    let linksOfLefts: String
    /// `(right, left)` of every link whose right key is in the JSON array `?1`, by right then left.
    let linksOfRights: String

    init(join: JoinSchema, entityCount: Int) {
        self.join = join
        slotBase = (entityCount + join.number) * SQLiteStatementSlot.perOwner
        table = quoted(join.name)
        link = "INSERT OR IGNORE INTO \(table) (\"left\", \"right\") VALUES (?1, ?2)"
        unlink = "DELETE FROM \(table) WHERE \"left\" = ?1 AND \"right\" = ?2"
        deleteLeft = "DELETE FROM \(table) WHERE \"left\" = ?1"
        deleteRight = "DELETE FROM \(table) WHERE \"right\" = ?1"
        rightsOfLeft = "SELECT \"right\" FROM \(table) WHERE \"left\" = ?1 ORDER BY \"right\""
        leftsOfRight = "SELECT \"left\" FROM \(table) WHERE \"right\" = ?1 ORDER BY \"left\""
        // The IN list's keys are walked in order through the primary key or the right index,
        // so neither query sorts.
        linksOfLefts =
            """
            SELECT \"left\", \"right\" FROM \(table) WHERE \"left\" IN (SELECT \"value\" FROM json_each(?1)) \
            ORDER BY \"left\", \"right\"
            """
        linksOfRights =
            """
            SELECT \"right\", \"left\" FROM \(table) WHERE \"right\" IN (SELECT \"value\" FROM json_each(?1)) \
            ORDER BY \"right\", \"left\"
            """
    }

    func create(schema: StoreSchema) -> [String] {
        let leftTable = quoted(schema.entities[join.leftEntity].name)
        let rightTable = quoted(schema.entities[join.rightEntity].name)
        return [
            """
            CREATE TABLE \(table) (\"left\" INTEGER NOT NULL REFERENCES \(leftTable)(\"id\"), \"right\" INTEGER \
            NOT NULL REFERENCES \(rightTable)(\"id\"), PRIMARY KEY (\"left\", \"right\")) WITHOUT ROWID
            """,
            "CREATE INDEX \(quoted(join.name + "_right")) ON \(table) (\"right\", \"left\")",
        ]
    }
}

/// Checks that a schema can be laid out as SQLite tables.
/// - Throws: `.invalidSchema` naming the first problem.
func validateLayout(_ schema: StoreSchema) throws(StrataError) {
    var names: Set<String> = ["strata_metadata", "strata_key_counters", "strata_history", "strata_history_cursors"]
    func claim(_ name: String, _ what: String) throws(StrataError) {
        guard !name.isEmpty, !name.lowercased().hasPrefix("sqlite_") else {
            throw .invalidSchema("\(what) name \(String(reflecting: name)) cannot be a SQLite table or index name")
        }
        guard names.insert(name.lowercased()).inserted else {
            throw .invalidSchema("\(what) name \(String(reflecting: name)) is used twice (SQLite names ignore case)")
        }
    }
    for (number, entity) in schema.entities.enumerated() {
        guard entity.number == number else {
            throw .invalidSchema("entity \(entity.name) has number \(entity.number), expected \(number)")
        }
        try claim(entity.name, "entity")
        var columnNames: Set<String> = ["id", "version"]
        for column in entity.columns {
            guard columnNames.insert(column.name.lowercased()).inserted else {
                throw .invalidSchema(
                    "\(entity.name).\(column.name): the column name is reserved (id, version) or repeated")
            }
            if let target = column.referencedEntity, !schema.entities.indices.contains(target) {
                throw .invalidSchema("\(entity.name).\(column.name) references entity \(target), which does not exist")
            }
        }
        for index in entity.indexes {
            try claim(index.name, "index")
            guard !index.columns.isEmpty, index.columns.allSatisfy(entity.columns.indices.contains) else {
                throw .invalidSchema("index \(index.name) names columns that \(entity.name) does not have")
            }
        }
    }
    for (number, join) in schema.joins.enumerated() {
        guard join.number == number else {
            throw .invalidSchema("join \(join.name) has number \(join.number), expected \(number)")
        }
        guard schema.entities.indices.contains(join.leftEntity), schema.entities.indices.contains(join.rightEntity)
        else {
            throw .invalidSchema("join \(join.name) names an entity that does not exist")
        }
        try claim(join.name, "join")
        try claim(join.name + "_right", "join index")
    }
}
