/// The engine's view of a schema: entities, their columns, indexes and join tables.
///
/// The core derives a `StoreSchema` from the model classes in a ``Strata/Schema``. Engines create
/// their tables or databases from it and never look at model classes. Column numbers are the
/// positions in ``EntitySchema/columns``; every ``StoredRow`` holds its values in that order.
public struct StoreSchema: Sendable, Hashable {
    /// The schema version the model declares. A store records it at creation.
    public var version: Int
    /// Entities, in the order of ``EntitySchema/number``.
    public var entities: [EntitySchema]
    /// Join tables for many-to-many relationships.
    public var joins: [JoinSchema]
    /// The whole schema in model terms, which a store records at creation and compares at every
    /// open (see ``reconcileRecorded(storeVersion:recordedJSON:path:session:)``). Nil only for schemas built
    /// by hand in engine tests: such a store records and checks its version number alone.
    public var recorded: RecordedSchema?
    /// Whether an open may migrate an older store whose recorded schema differs, when every
    /// difference can be inferred (``SchemaMigrationPlan/infer(from:to:renames:)``). The core turns
    /// it on; when off, an older store is refused with
    /// ``StrataError/schemaMismatch(storeVersion:modelVersion:differences:)``.
    public var infersMigrations: Bool
    /// The model's `originalName`s (new name → the name an older store has), which inferred
    /// migrations use to rename instead of dropping and adding. Not recorded in the store.
    public var renames: SchemaRenames
    /// The staged migrations to run when the store is older (``StoreMigrationPlan``), nil for none:
    /// an older store is then migrated by inference alone, when ``infersMigrations`` is on.
    public var migrationPlan: StoreMigrationPlan?

    /// A store schema.
    public init(
        version: Int, entities: [EntitySchema], joins: [JoinSchema], recorded: RecordedSchema? = nil,
        infersMigrations: Bool = false, renames: SchemaRenames = SchemaRenames(),
        migrationPlan: StoreMigrationPlan? = nil
    ) {
        self.infersMigrations = infersMigrations
        self.renames = renames
        self.migrationPlan = migrationPlan
        self.version = version
        self.entities = entities
        self.joins = joins
        self.recorded = recorded
    }
}

/// One entity: a table (SQLite) or a named database (LMDB).
public struct EntitySchema: Sendable, Hashable {
    /// The entity's name, also its table name. ASCII letters, digits and `_`.
    public var name: String
    /// Position in ``StoreSchema/entities``; engines use it to address entities.
    public var number: Int
    /// Attribute and to-one foreign-key columns, in row order.
    public var columns: [ColumnSchema]
    /// Secondary indexes, including uniqueness constraints.
    public var indexes: [IndexSchema]

    /// An entity.
    public init(name: String, number: Int, columns: [ColumnSchema], indexes: [IndexSchema]) {
        self.name = name
        self.number = number
        self.columns = columns
        self.indexes = indexes
    }
}

/// The Swift type an attribute column holds; it fixes the storage class.
public enum ColumnType: String, Sendable, Hashable, CaseIterable {
    /// `Bool`: an integer, 0 or 1.
    case bool
    /// `Int`: an integer that fits the platform's `Int`.
    case int
    /// `Int64`: an integer.
    case int64
    /// `Double`: a real, never NaN.
    case double
    /// `String`: a text.
    case string
    /// `Date`: a real, seconds since 2001-01-01 00:00:00 UTC (`timeIntervalSinceReferenceDate`).
    case date
    /// `Data`: a blob.
    case data
    /// `UUID`: a blob of 16 bytes.
    case uuid
    /// A to-one relationship: the primary key of a row of ``ColumnSchema/referencedEntity``.
    case reference

    /// The storage class a non-null value of this type uses.
    public var storageClass: StorageClass {
        switch self {
        case .bool, .int, .int64, .reference: .integer
        case .double, .date: .real
        case .string: .text
        case .data, .uuid: .blob
        }
    }
}

/// The five shapes a ``StoredValue`` can take, minus null.
public enum StorageClass: String, Sendable, Hashable {
    /// A 64-bit signed integer.
    case integer
    /// A double-precision float.
    case real
    /// A UTF-8 text.
    case text
    /// Bytes.
    case blob

    /// Whether `value` is null or of this class.
    public func admits(_ value: StoredValue) -> Bool {
        switch (self, value) {
        case (_, .null), (.integer, .integer), (.real, .real), (.text, .text), (.blob, .blob): true
        default: false
        }
    }
}

/// One column of an entity.
public struct ColumnSchema: Sendable, Hashable {
    /// The attribute or relationship name, also the column name.
    public var name: String
    /// The Swift type of the column's values.
    public var type: ColumnType
    /// Whether the column admits `.null`.
    public var isOptional: Bool
    /// For `.reference` columns, the entity number the key points at.
    public var referencedEntity: Int?

    /// A column.
    public init(name: String, type: ColumnType, isOptional: Bool, referencedEntity: Int? = nil) {
        self.name = name
        self.type = type
        self.isOptional = isOptional
        self.referencedEntity = referencedEntity
    }
}

/// A secondary index over one or more columns; unique indexes are constraints.
///
/// Engines must index every `.reference` column too (the core declares those indexes
/// explicitly), so that loading a to-many relationship is an index lookup.
public struct IndexSchema: Sendable, Hashable {
    /// A name unique in the store, e.g. `Account_name_unique`.
    public var name: String
    /// Column numbers, most significant first.
    public var columns: [Int]
    /// Whether the index is a uniqueness constraint (nulls never conflict).
    public var isUnique: Bool

    /// An index.
    public init(name: String, columns: [Int], isUnique: Bool) {
        self.name = name
        self.columns = columns
        self.isUnique = isUnique
    }
}

/// A many-to-many relationship's link table: pairs of (left key, right key).
public struct JoinSchema: Sendable, Hashable {
    /// A name unique in the store, e.g. `Tag_accounts_Account_tags`.
    public var name: String
    /// Position in ``StoreSchema/joins``.
    public var number: Int
    /// The entity number of the left keys.
    public var leftEntity: Int
    /// The entity number of the right keys.
    public var rightEntity: Int

    /// A join.
    public init(name: String, number: Int, leftEntity: Int, rightEntity: Int) {
        self.name = name
        self.number = number
        self.leftEntity = leftEntity
        self.rightEntity = rightEntity
    }
}

/// Which end of a join a key belongs to.
public enum JoinSide: Sendable, Hashable {
    /// The join's left entity (``JoinSchema/leftEntity``).
    case left
    /// The join's right entity (``JoinSchema/rightEntity``).
    case right
}
