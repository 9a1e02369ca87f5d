package import StrataStorage

extension RecordedSchema {
    /// The engine's schema of a store that recorded this description, built as the core builds it
    /// from the model classes (`Schema`), so that an engine opened with it finds the store's own
    /// tables, columns and indexes: columns in recorded order, an attribute's own unique or plain
    /// index and a to-one key's `_ref` index at its column, then the declared indexes.
    /// - Throws: `ToolError.schemaUnreadable` when a relationship, column or join names something
    ///   the description does not have.
    package func storeSchema() throws(ToolError) -> StoreSchema {
        let numbers = Dictionary(entities.enumerated().map { ($1.name, $0) }, uniquingKeysWith: { first, _ in first })
        var entitySchemas: [EntitySchema] = []
        for (number, entity) in entities.enumerated() {
            entitySchemas.append(try Self.entitySchema(entity, number: number, numbers: numbers))
        }
        var joinSchemas: [JoinSchema] = []
        for join in joins {
            guard let left = numbers[join.left], let right = numbers[join.right] else {
                throw .schemaUnreadable("join \(join.name) names an entity the recorded schema does not list")
            }
            joinSchemas.append(
                JoinSchema(name: join.name, number: joinSchemas.count, leftEntity: left, rightEntity: right))
        }
        return StoreSchema(version: version, entities: entitySchemas, joins: joinSchemas, recorded: self)
    }

    private static func entitySchema(
        _ entity: RecordedEntity, number: Int, numbers: [String: Int]
    ) throws(ToolError) -> EntitySchema {
        var columns: [ColumnSchema] = []
        var indexes: [IndexSchema] = []
        var declared = entity.indexes
        for name in entity.columns {
            let column = columns.count
            if let attribute = entity.attributes.first(where: { $0.name == name }) {
                columns.append(ColumnSchema(name: name, type: attribute.type, isOptional: attribute.isOptional))
                let own = ["\(entity.name)_\(name)_unique", "\(entity.name)_\(name)_index"]
                if let place = declared.firstIndex(where: { own.contains($0.name) && $0.attributes == [name] }) {
                    let index = declared.remove(at: place)
                    indexes.append(IndexSchema(name: index.name, columns: [column], isUnique: index.isUnique))
                }
            } else if let relation = entity.relationships.first(where: { $0.name == name && $0.kind == .toOne }),
                let target = numbers[relation.target]
            {
                columns.append(ColumnSchema(name: name, type: .reference, isOptional: true, referencedEntity: target))
                indexes.append(IndexSchema(name: "\(entity.name)_\(name)_ref", columns: [column], isUnique: false))
            } else {
                throw .schemaUnreadable(
                    "column \(entity.name).\(name) is neither an attribute nor a to-one relationship")
            }
        }
        for index in declared {
            var indexColumns: [Int] = []
            for attribute in index.attributes {
                guard let column = columns.firstIndex(where: { $0.name == attribute }) else {
                    throw .schemaUnreadable(
                        "index \(index.name) names \(attribute), which \(entity.name) does not have")
                }
                indexColumns.append(column)
            }
            indexes.append(IndexSchema(name: index.name, columns: indexColumns, isUnique: index.isUnique))
        }
        return EntitySchema(name: entity.name, number: number, columns: columns, indexes: indexes)
    }
}
