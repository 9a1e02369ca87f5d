import StrataStorage

/// Quotes an SQL identifier: `name` → `"name"`, doubling embedded quotes.
func pgQuoted(_ identifier: String) -> String {
    "\"" + identifier.split(separator: "\"", omittingEmptySubsequences: false).joined(separator: "\"\"") + "\""
}

/// The SQL names and statements of one entity's table in a store's schema, computed once at open.
///
/// Every name is schema-qualified (`"books"."Account"`); `search_path` is never relied on. The
/// table is `id int8 PRIMARY KEY, version int8 NOT NULL`, then one column per attribute or to-one
/// relationship (`int8`, `float8`, `text COLLATE "C"` or `bytea`, see ``sqlType(_:)``).
final class PostgresTableLayout: Sendable {
    let entity: EntitySchema
    /// `"schema"."Entity"`.
    let table: String
    /// `"id", "version", "c1", …` in row order.
    let selectList: String
    let selectByKey: String
    /// `INSERT … SELECT … FROM unnest($1::int8[], $2, …)`: many rows in one statement, one array
    /// per column (keys, then the values), every row at version 1. A key taken already fails the
    /// statement on the primary key (SQLSTATE 23505), which the commit reports as a conflict.
    /// (No `ON CONFLICT DO NOTHING`: its speculative insertion made a 1,000,000-row insert take
    /// 1.5 times as long on the server.)
    let insertBatch: String
    /// One row: `UPDATE … WHERE "id" = $1 AND "version" = $last` (the row-by-row fallback of
    /// ``updateBatch`` when a unique value moves between rows).
    let update: String
    /// `UPDATE … FROM unnest($1::int8[] keys, $2::int8[] expected versions, $3… values)`: many
    /// rows in one statement, each at its expected version plus one.
    let updateBatch: String
    /// `UPDATE … SET "version" = "version" + 1 FROM unnest($1 keys, $2 expected versions)`.
    let touchBatch: String
    /// `DELETE … USING unnest($1 keys, $2 expected versions)`.
    let deleteBatch: String
    /// `SELECT id, version … WHERE id = ANY($1) ORDER BY id FOR UPDATE`: the versions a commit checks.
    let lockVersions: String
    /// The same without a lock (insert keys).
    let versionsOf: String
    let storageClasses: [StorageClass]
    let decoding: [ColumnDecoding]

    struct ColumnDecoding: Sendable {
        let storageClass: StorageClass
        let isBool: Bool
        let isOptional: Bool
    }

    init(entity: EntitySchema, schemaName: String) {
        self.entity = entity
        table = pgQuoted(schemaName) + "." + pgQuoted(entity.name)
        let columns = entity.columns.map { pgQuoted($0.name) }
        selectList = (["\"id\"", "\"version\""] + columns).joined(separator: ", ")
        selectByKey = "SELECT \(selectList) FROM \(table) WHERE \"id\" = $1"
        let storage = entity.columns.map(\.type.storageClass)
        let arrays = ["$1::int8[]"] + storage.enumerated().map { "$\($0 + 2)::\(Self.arrayType($1))" }
        let aliases = storage.indices.map { ", c\($0)" }.joined()
        insertBatch = """
            INSERT INTO \(table) (\(selectList)) SELECT k, 1\(aliases) \
            FROM unnest(\(arrays.joined(separator: ", "))) AS u(k\(aliases))
            """
        // $1 id, $2 new version, $3… values, last: expected version.
        let assignments = (["\"version\" = $2"] + columns.enumerated().map { "\($1) = $\($0 + 3)" }).joined(
            separator: ", ")
        update = "UPDATE \(table) SET \(assignments) WHERE \"id\" = $1 AND \"version\" = $\(columns.count + 3)"
        // The batches match each key and its expected version (the rows are locked and checked
        // already: the affected count is checked once more). `"id" = ANY($1)` leads the planner
        // to the primary key instead of a scan of the table for the join with `unnest`.
        let matched = "t.\"id\" = ANY($1::int8[]) AND t.\"id\" = u.k AND t.\"version\" = u.v"
        let batchArrays =
            ["$1::int8[]", "$2::int8[]"] + storage.enumerated().map { "$\($0 + 3)::\(Self.arrayType($1))" }
        let batchAssignments = (["\"version\" = u.v + 1"] + columns.enumerated().map { "\($1) = u.c\($0)" })
            .joined(separator: ", ")
        updateBatch = """
            UPDATE \(table) AS t SET \(batchAssignments) \
            FROM unnest(\(batchArrays.joined(separator: ", "))) AS u(k, v\(aliases)) WHERE \(matched)
            """
        touchBatch = """
            UPDATE \(table) AS t SET "version" = t."version" + 1 \
            FROM unnest($1::int8[], $2::int8[]) AS u(k, v) WHERE \(matched)
            """
        deleteBatch = "DELETE FROM \(table) AS t USING unnest($1::int8[], $2::int8[]) AS u(k, v) WHERE \(matched)"
        lockVersions =
            "SELECT \"id\", \"version\" FROM \(table) WHERE \"id\" = ANY($1) ORDER BY \"id\" FOR UPDATE"
        versionsOf = "SELECT \"id\", \"version\" FROM \(table) WHERE \"id\" = ANY($1)"
        storageClasses = entity.columns.map(\.type.storageClass)
        decoding = entity.columns.map {
            ColumnDecoding(storageClass: $0.type.storageClass, isBool: $0.type == .bool, isOptional: $0.isOptional)
        }
    }

    /// `CREATE TABLE` and its indexes.
    func create(schemaName: String) -> [String] {
        let parts =
            [
                "\"id\" int8 CONSTRAINT \(pgQuoted(PostgresDerivedName.primaryKey(of: entity.name))) PRIMARY KEY",
                "\"version\" int8 NOT NULL",
            ]
            + entity.columns.map { column in
                """
                \(pgQuoted(column.name)) \
                \(Self.sqlType(column.type.storageClass))\(column.isOptional ? "" : " NOT NULL")
                """
            }
        var statements = ["CREATE TABLE \(table) (\(parts.joined(separator: ", ")))"]
        for index in entity.indexes {
            let columns = index.columns.map { pgQuoted(entity.columns[$0].name) }.joined(separator: ", ")
            statements.append(
                "CREATE \(index.isUnique ? "UNIQUE " : "")INDEX \(pgQuoted(index.name)) ON \(table) (\(columns))")
        }
        return statements
    }

    /// The column type of a storage class.
    static func sqlType(_ storageClass: StorageClass) -> String {
        switch storageClass {
        case .integer: "int8"
        case .real: "float8"
        case .text: "text COLLATE \"C\""
        case .blob: "bytea"
        }
    }

    /// The array type of a storage class's column, for `unnest`.
    static func arrayType(_ storageClass: StorageClass) -> String {
        switch storageClass {
        case .integer: "int8[]"
        case .real: "float8[]"
        case .text: "text[]"
        case .blob: "bytea[]"
        }
    }

    /// The type OID a result column of a storage class has.
    static func typeOID(_ storageClass: StorageClass) -> UInt32 {
        switch storageClass {
        case .integer: PGParameter.int8OID
        case .real: PGParameter.float8OID
        case .text: PGParameter.textOID
        case .blob: PGParameter.byteaOID
        }
    }
}

/// The SQL of one many-to-many join table (`left`, `right`, primary key on both, an index on
/// `(right, left)`).
final class PostgresJoinLayout: Sendable {
    let join: JoinSchema
    let table: String
    /// `INSERT … SELECT … FROM unnest($1 lefts, $2 rights) ON CONFLICT DO NOTHING`.
    let linkBatch: String
    /// `DELETE … USING unnest($1 lefts, $2 rights)`.
    let unlinkBatch: String
    let deleteLefts: String
    let deleteRights: String
    let rightsOfLeft: String
    let leftsOfRight: String
    let linksOfLefts: String
    let linksOfRights: String
    private let rightIndex: String
    private let primaryKey: String

    init(join: JoinSchema, schemaName: String) {
        self.join = join
        table = pgQuoted(schemaName) + "." + pgQuoted(join.name)
        rightIndex = pgQuoted(PostgresDerivedName.rightIndex(of: join.name))
        primaryKey = pgQuoted(PostgresDerivedName.primaryKey(of: join.name))
        linkBatch = """
            INSERT INTO \(table) ("left", "right") SELECT l, r FROM unnest($1::int8[], $2::int8[]) AS u(l, r) \
            ON CONFLICT DO NOTHING
            """
        unlinkBatch = """
            DELETE FROM \(table) AS j USING unnest($1::int8[], $2::int8[]) AS u(l, r) \
            WHERE j."left" = ANY($1::int8[]) AND j."left" = u.l AND j."right" = u.r
            """
        deleteLefts = "DELETE FROM \(table) WHERE \"left\" = ANY($1)"
        deleteRights = "DELETE FROM \(table) WHERE \"right\" = ANY($1)"
        rightsOfLeft = "SELECT \"right\" FROM \(table) WHERE \"left\" = $1 ORDER BY \"right\""
        leftsOfRight = "SELECT \"left\" FROM \(table) WHERE \"right\" = $1 ORDER BY \"left\""
        linksOfLefts =
            "SELECT \"left\", \"right\" FROM \(table) WHERE \"left\" = ANY($1) ORDER BY \"left\", \"right\""
        linksOfRights =
            "SELECT \"right\", \"left\" FROM \(table) WHERE \"right\" = ANY($1) ORDER BY \"right\", \"left\""
    }

    func create() -> [String] {
        [
            """
            CREATE TABLE \(table) ("left" int8 NOT NULL, "right" int8 NOT NULL, CONSTRAINT \(primaryKey) \
            PRIMARY KEY ("left", "right"))
            """,
            "CREATE INDEX \(rightIndex) ON \(table) (\"right\", \"left\")",
        ]
    }
}

/// Checks that a schema can be laid out as PostgreSQL tables: names claimed once (exactly, as
/// quoted names are case-sensitive), none reserved, none past PostgreSQL's 63 bytes.
/// - Throws: `.invalidSchema` naming the first problem.
func validatePostgresLayout(_ schema: StoreSchema) throws(StrataError) {
    var names: Set<String> = [
        "strata_metadata", "strata_key_counters", "strata_history", "strata_history_cursors", "strata_history_clock",
        "strata_commits", "strata_commits_pkey", "strata_commits_at",
    ]
    func claim(_ name: String, _ what: String) throws(StrataError) {
        guard !name.isEmpty, name.utf8.count <= 63, !name.utf8.contains(0) else {
            throw .invalidSchema(
                "\(what) name \(String(reflecting: name)) cannot be a PostgreSQL name (1 to 63 bytes, no NUL)")
        }
        guard names.insert(name).inserted else {
            throw .invalidSchema("\(what) name \(String(reflecting: name)) is used twice or reserved")
        }
    }
    for (number, entity) in schema.entities.enumerated() {
        guard entity.number == number else {
            throw .invalidSchema("entity \(entity.name) has number \(entity.number), expected \(number)")
        }
        try claim(entity.name, "entity")
        try claim(PostgresDerivedName.primaryKey(of: entity.name), "primary key")
        var columnNames: Set<String> = ["id", "version"]
        for column in entity.columns {
            guard column.name.utf8.count <= 63, !column.name.isEmpty, columnNames.insert(column.name).inserted else {
                throw .invalidSchema(
                    "\(entity.name).\(column.name): the column name is reserved (id, version), repeated or too long")
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
        else { throw .invalidSchema("join \(join.name) names an entity that does not exist") }
        try claim(join.name, "join")
        try claim(PostgresDerivedName.rightIndex(of: join.name), "join index")
        try claim(PostgresDerivedName.primaryKey(of: join.name), "join primary key")
    }
}
