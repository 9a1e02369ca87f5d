public import StrataStorage

/// The model classes of a store and its version number.
///
/// ```swift
/// let schema = try Schema(version: 1, [Account.self, Transaction.self])
/// let container = try PersistentContainer(schema: schema, engine: .sqlite(at: url))
/// ```
///
/// Building a schema reflects over each class once. Every class a relationship reaches must
/// be listed.
/// - Throws: ``StrataStorage/StrataError/invalidSchema(_:)`` when a class cannot be an entity (a missing or
///   mismatched inverse, a default that changes per instance, an invalid name, an unlisted
///   related class, an index over a non-attribute).
public struct Schema: Sendable {
    /// The version recorded in new stores; opening a store of another version fails.
    public let version: Int
    let models: [EntityModel]
    /// The engines' view of this schema: tables or databases, columns, indexes and joins.
    package let storeSchema: StoreSchema
    /// The whole schema in model terms, as a store records it at creation and compares at every
    /// open: a store whose recorded schema differs is refused with
    /// ``StrataStorage/StrataError/schemaMismatch(storeVersion:modelVersion:differences:)``.
    ///
    /// ```swift
    /// print(try schema.recordedSchema.jsonText())
    /// ```
    public let recordedSchema: RecordedSchema
    private let numbers: [ObjectIdentifier: Int]
    private let joinNumbers: [String: Int]

    /// A schema of the given model classes.
    /// - Parameters:
    ///   - version: the schema version recorded in new stores (at least 1).
    ///   - types: every entity class, including every class a relationship reaches.
    /// - Throws: ``StrataStorage/StrataError/invalidSchema(_:)``.
    public init(version: Int = 1, _ types: [ManagedObject.Type]) throws(StrataError) {
        guard version >= 1 else { throw .invalidSchema("the schema version must be at least 1") }
        self.version = version
        var models: [EntityModel] = []
        var numbers: [ObjectIdentifier: Int] = [:]
        for type in types {
            let model = try ModelRegistry.model(for: type)
            guard numbers[ObjectIdentifier(model)] == nil else { throw .invalidSchema("\(model.name) is listed twice") }
            if models.contains(where: { $0.name == model.name }) {
                throw .invalidSchema("two classes use the entity name \(model.name)")
            }
            numbers[ObjectIdentifier(model)] = models.count
            models.append(model)
        }
        self.models = models
        self.numbers = numbers
        var joins: [JoinSchema] = []
        var entities: [EntitySchema] = []
        for (number, model) in models.enumerated() {
            entities.append(try Self.entitySchema(model, number: number, numbers: numbers, joins: &joins))
        }
        self.joinNumbers = Dictionary(uniqueKeysWithValues: joins.map { ($0.name, $0.number) })
        try Self.checkPortableNames(entities, joins)
        let recorded = Self.recordedSchema(version: version, models: models, entities: entities, joins: joins)
        self.recordedSchema = recorded
        var renames = SchemaRenames()
        for model in models {
            if let original = model.originalName, original != model.name { renames.entities[model.name] = original }
            if !model.originalAttributeNames.isEmpty { renames.attributes[model.name] = model.originalAttributeNames }
        }
        self.storeSchema = StoreSchema(
            version: version, entities: entities, joins: joins, recorded: recorded, infersMigrations: true,
            renames: renames)
    }

    /// The entity names, in schema order.
    public var entityNames: [String] { models.map(\.name) }

    func number(of model: EntityModel) -> Int? { numbers[ObjectIdentifier(model)] }

    func model(named name: String) -> EntityModel? { models.first { $0.name == name } }

    /// The entity that was called `name` before a rename (its ``ManagedObject/originalEntityName``).
    func model(renamedFrom name: String) -> EntityModel? { models.first { $0.originalName == name } }

    func joinNumber(_ name: String) -> Int? { joinNumbers[name] }

    private static func entitySchema(
        _ model: EntityModel, number: Int, numbers: [ObjectIdentifier: Int], joins: inout [JoinSchema]
    ) throws(StrataError) -> EntitySchema {
        var columns: [ColumnSchema] = []
        var indexes: [IndexSchema] = []
        for (index, property) in model.properties.enumerated() {
            switch property.kind {
            case .attribute(let type, let isOptional, let options):
                let column = columns.count
                columns.append(ColumnSchema(name: property.name, type: type, isOptional: isOptional))
                if options.contains(.unique) {
                    indexes.append(
                        IndexSchema(name: "\(model.name)_\(property.name)_unique", columns: [column], isUnique: true))
                } else if options.contains(.indexed) {
                    indexes.append(
                        IndexSchema(name: "\(model.name)_\(property.name)_index", columns: [column], isUnique: false))
                }
            case .relationship:
                guard let relation = model.relations[index] else { continue }
                guard let target = numbers[ObjectIdentifier(relation.target)] else {
                    throw .invalidSchema(
                        """
                        \(model.name).\(property.name) points at \(relation.target.name), which the schema does \
                        not list
                        """
                    )
                }
                if !relation.isToMany {
                    let column = columns.count
                    columns.append(
                        ColumnSchema(name: property.name, type: .reference, isOptional: true, referencedEntity: target))
                    indexes.append(
                        IndexSchema(name: "\(model.name)_\(property.name)_ref", columns: [column], isUnique: false))
                } else if let joinName = relation.joinName, relation.isJoinLeft {
                    joins.append(
                        JoinSchema(name: joinName, number: joins.count, leftEntity: number, rightEntity: target))
                }
            }
        }
        for declared in model.declaredIndexes {
            var indexColumns: [Int] = []
            for keyPath in declared.keyPaths {
                guard let property = model.propertyIndex(forKeyPath: keyPath),
                    let column = model.properties[property].column,
                    !model.properties[property].isRelationship
                else {
                    throw .invalidSchema(
                        "an index of \(model.name) names \(keyPath), which is not an attribute of \(model.name)")
                }
                indexColumns.append(column)
            }
            let names = indexColumns.map { columns[$0].name }.joined(separator: "_")
            indexes.append(
                IndexSchema(
                    name: "\(model.name)_\(names)_\(declared.isUnique ? "unique" : "index")", columns: indexColumns,
                    isUnique: declared.isUnique))
        }
        return EntitySchema(name: model.name, number: number, columns: columns, indexes: indexes)
    }
}
