/// One way a model differs from the schema a store recorded, in model terms.
///
/// ``RecordedSchema/differences(from:to:)`` lists them; a
/// ``StrataError/schemaMismatch(storeVersion:modelVersion:differences:)`` carries them, and its
/// message prints each ``description``, e.g. "`Book.isbn` was added: `String`, not optional, no
/// default".
///
/// ```swift
/// for difference in RecordedSchema.differences(from: recorded, to: model) { print(difference) }
/// ```
public enum SchemaDifference: Sendable, Hashable, CustomStringConvertible {
    /// The model has an entity the store does not.
    case entityAdded(RecordedEntity)
    /// The store has an entity the model does not.
    case entityRemoved(RecordedEntity)
    /// The model's entity has an attribute the store's does not.
    case attributeAdded(entity: String, RecordedAttribute)
    /// The store's entity has an attribute the model's does not.
    case attributeRemoved(entity: String, RecordedAttribute)
    /// An attribute's stored type changed.
    case attributeTypeChanged(entity: String, attribute: String, from: ColumnType, to: ColumnType)
    /// An attribute became optional or required.
    case attributeOptionalityChanged(entity: String, attribute: String, isOptional: Bool)
    /// An attribute's default changed.
    case attributeDefaultChanged(entity: String, attribute: String, from: RecordedValue?, to: RecordedValue?)
    /// The model's entity has a relationship the store's does not.
    case relationshipAdded(entity: String, RecordedRelationship)
    /// The store's entity has a relationship the model's does not.
    case relationshipRemoved(entity: String, RecordedRelationship)
    /// A relationship of the same name has another target, inverse, kind, delete rule or join.
    case relationshipChanged(entity: String, from: RecordedRelationship, to: RecordedRelationship)
    /// The model declares an index the store does not have.
    case indexAdded(entity: String, RecordedIndex)
    /// The store has an index the model no longer declares.
    case indexRemoved(entity: String, RecordedIndex)
    /// The model declares a unique constraint the store does not have.
    case uniqueConstraintAdded(entity: String, RecordedIndex)
    /// The store has a unique constraint the model no longer declares.
    case uniqueConstraintRemoved(entity: String, RecordedIndex)
    /// The model has a many-to-many join table the store does not.
    case joinAdded(RecordedJoin)
    /// The store has a many-to-many join table the model does not.
    case joinRemoved(RecordedJoin)
    /// The same columns are stored in another order (rows would be read into the wrong properties).
    case columnOrderChanged(entity: String, from: [String], to: [String])
    /// A store made before stores recorded their schema does not have the tables or databases the
    /// model needs (found when such a store is first opened; the engine says what it found).
    case unrecordedStoreDiffers(String)

    /// The difference in model terms, e.g. "`Book.isbn` was added: `String`, not optional, no default".
    public var description: String {
        switch self {
        case .entityAdded(let entity):
            "entity `\(entity.name)` was added"
        case .entityRemoved(let entity):
            "entity `\(entity.name)` was removed"
        case .attributeAdded(let entity, let attribute):
            "`\(entity).\(attribute.name)` was added: \(Self.describe(attribute))"
        case .attributeRemoved(let entity, let attribute):
            "`\(entity).\(attribute.name)` was removed (it was \(Self.describe(attribute)))"
        case .attributeTypeChanged(let entity, let attribute, let from, let to):
            "`\(entity).\(attribute)` changed type from `\(Self.name(from))` to `\(Self.name(to))`"
        case .attributeOptionalityChanged(let entity, let attribute, let isOptional):
            isOptional
                ? "`\(entity).\(attribute)` became optional (it was required)"
                : "`\(entity).\(attribute)` became required (it was optional)"
        case .attributeDefaultChanged(let entity, let attribute, let from, let to):
            "`\(entity).\(attribute)` changed its default from \(Self.describeDefault(from)) to "
                + Self.describeDefault(to)
        case .relationshipAdded(let entity, let relationship):
            "relationship `\(entity).\(relationship.name)` was added: \(Self.describe(relationship))"
        case .relationshipRemoved(let entity, let relationship):
            "relationship `\(entity).\(relationship.name)` was removed (it was \(Self.describe(relationship)))"
        case .relationshipChanged(let entity, let from, let to):
            "relationship `\(entity).\(to.name)` changed from \(Self.describe(from)) to \(Self.describe(to))"
        case .indexAdded(let entity, let index):
            "an index on `\(entity)` (\(Self.describe(index))) was added"
        case .indexRemoved(let entity, let index):
            "the index on `\(entity)` (\(Self.describe(index))) was removed"
        case .uniqueConstraintAdded(let entity, let index):
            "a unique constraint on `\(entity)` (\(Self.describe(index))) was added"
        case .uniqueConstraintRemoved(let entity, let index):
            "the unique constraint on `\(entity)` (\(Self.describe(index))) was removed"
        case .joinAdded(let join):
            "join table `\(join.name)` (`\(join.left)` ↔ `\(join.right)`) was added"
        case .joinRemoved(let join):
            "join table `\(join.name)` (`\(join.left)` ↔ `\(join.right)`) was removed"
        case .columnOrderChanged(let entity, let from, let to):
            """
            the stored columns of `\(entity)` are in another order: \(from.joined(separator: ", ")) in the \
            store, \(to.joined(separator: ", ")) in the model
            """
        case .unrecordedStoreDiffers(let detail):
            "the store records no schema (it predates recorded schemas) and its layout is not the model's: \(detail)"
        }
    }

    /// `Int64`, `String`, … as the model declares it.
    private static func name(_ type: ColumnType) -> String {
        switch type {
        case .bool: "Bool"
        case .int: "Int"
        case .int64: "Int64"
        case .double: "Double"
        case .string: "String"
        case .date: "Date"
        case .data: "Data"
        case .uuid: "UUID"
        case .reference: "reference"
        }
    }

    private static func describe(_ attribute: RecordedAttribute) -> String {
        let optionality = attribute.isOptional ? "optional" : "not optional"
        return "`\(name(attribute.type))`, \(optionality), \(describe(attribute.defaultValue))"
    }

    private static func describe(_ value: RecordedValue?) -> String {
        guard let value else { return "no default" }
        return "default \(value)"
    }

    /// A default as a value, or "no default".
    private static func describeDefault(_ value: RecordedValue?) -> String {
        value.map { "\($0)" } ?? "no default"
    }

    private static func describe(_ relationship: RecordedRelationship) -> String {
        let kind =
            switch relationship.kind {
            case .toOne: "to-one"
            case .toMany: "to-many"
            case .manyToMany: "many-to-many"
            }
        var text = "\(kind) to `\(relationship.target)`, inverse `\(relationship.inverse)`"
        text += ", delete rule \(relationship.deleteRule)"
        if let join = relationship.join { text += ", join `\(join)`" }
        return text
    }

    private static func describe(_ index: RecordedIndex) -> String {
        "\(index.attributes.joined(separator: ", ")), named \(index.name)"
    }
}
