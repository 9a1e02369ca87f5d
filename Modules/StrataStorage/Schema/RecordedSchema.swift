/// The whole schema of a store in model terms, as the store records it next to its version.
///
/// A store records this description at creation, as JSON with sorted keys (see
/// ``jsonText()``): a row `schema` in SQLite's `strata_metadata` table, an entry `schema` in
/// LMDB's metadata database. At every open the model's description is compared with the
/// recorded one (``differences(from:to:)``); any difference is refused with
/// ``StrataError/schemaMismatch(storeVersion:modelVersion:differences:)``, whatever the version numbers say.
///
/// ```swift
/// let recorded = try RecordedSchema(jsonText: text)
/// for difference in RecordedSchema.differences(from: recorded, to: model) { print(difference) }
/// ```
///
/// The core builds it from the model classes (`Schema.recordedSchema`); engines store it
/// unread and hand it back. Arrays keep the model's declaration order, so the JSON of one model
/// is the same bytes every time.
public struct RecordedSchema: Sendable, Hashable, Codable {
    /// The layout of this description itself; ``RecordedSchema/currentFormat`` for new stores.
    public var format: Int
    /// The schema version the model declares.
    public var version: Int
    /// Entities, in schema order.
    public var entities: [RecordedEntity]
    /// Join tables of many-to-many relationships, in schema order.
    public var joins: [RecordedJoin]

    /// The layout version this build writes and reads.
    public static let currentFormat = 1

    /// A recorded schema.
    public init(version: Int, entities: [RecordedEntity], joins: [RecordedJoin], format: Int = Self.currentFormat) {
        self.format = format
        self.version = version
        self.entities = entities
        self.joins = joins
    }

    /// The entity called `name`.
    public func entity(named name: String) -> RecordedEntity? { entities.first { $0.name == name } }
}

/// One entity as a store records it.
public struct RecordedEntity: Sendable, Hashable, Codable {
    /// The entity name (its table or database name).
    public var name: String
    /// The stored columns in row order: attributes and to-one relationships.
    public var columns: [String]
    /// The attributes, in declaration order.
    public var attributes: [RecordedAttribute]
    /// The relationships, in declaration order.
    public var relationships: [RecordedRelationship]
    /// Declared indexes and unique constraints (not the engines' own indexes of to-one keys).
    public var indexes: [RecordedIndex]

    /// An entity.
    public init(
        name: String, columns: [String], attributes: [RecordedAttribute], relationships: [RecordedRelationship],
        indexes: [RecordedIndex]
    ) {
        self.name = name
        self.columns = columns
        self.attributes = attributes
        self.relationships = relationships
        self.indexes = indexes
    }
}

/// One attribute: its type, optionality and default.
public struct RecordedAttribute: Sendable, Hashable, Codable {
    /// The attribute name (its column name).
    public var name: String
    /// The stored type (a raw-value or `Codable` attribute records its storage type).
    public var type: ColumnType
    /// Whether the attribute admits nil.
    public var isOptional: Bool
    /// The default new objects get; nil when the attribute has none.
    public var defaultValue: RecordedValue?

    /// An attribute.
    public init(name: String, type: ColumnType, isOptional: Bool, defaultValue: RecordedValue?) {
        self.name = name
        self.type = type
        self.isOptional = isOptional
        self.defaultValue = defaultValue
    }
}

/// One relationship with its inverse and delete rule.
public struct RecordedRelationship: Sendable, Hashable, Codable {
    /// Whether a relationship holds one object, many, or many on both sides.
    public enum Kind: String, Sendable, Hashable, Codable {
        /// One target, stored as a key column.
        case toOne
        /// Many targets, whose inverse is to-one (derived from the inverse's key column).
        case toMany
        /// Many targets on both sides, stored in a join table.
        case manyToMany
    }

    /// The relationship name.
    public var name: String
    /// The target entity's name.
    public var target: String
    /// The inverse relationship's name on the target.
    public var inverse: String
    /// To-one, to-many or many-to-many.
    public var kind: Kind
    /// The delete rule's name: `nullify`, `cascade` or `deny`.
    public var deleteRule: String
    /// For many-to-many: the join table's name.
    public var join: String?

    /// A relationship.
    public init(name: String, target: String, inverse: String, kind: Kind, deleteRule: String, join: String? = nil) {
        self.name = name
        self.target = target
        self.inverse = inverse
        self.kind = kind
        self.deleteRule = deleteRule
        self.join = join
    }
}

/// A declared index or unique constraint over attributes.
public struct RecordedIndex: Sendable, Hashable, Codable {
    /// The index name, unique in the store.
    public var name: String
    /// The attribute names, most significant first.
    public var attributes: [String]
    /// Whether it is a uniqueness constraint.
    public var isUnique: Bool

    /// An index.
    public init(name: String, attributes: [String], isUnique: Bool) {
        self.name = name
        self.attributes = attributes
        self.isUnique = isUnique
    }
}

/// A many-to-many join table.
public struct RecordedJoin: Sendable, Hashable, Codable {
    /// The join name, unique in the store.
    public var name: String
    /// The left entity's name.
    public var left: String
    /// The right entity's name.
    public var right: String

    /// A join.
    public init(name: String, left: String, right: String) {
        self.name = name
        self.left = left
        self.right = right
    }
}

extension ColumnType: Codable {}
