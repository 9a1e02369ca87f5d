import StrataStorage

extension Schema {
    /// The whole schema in model terms, as stores record it (see `RecordedSchema`).
    ///
    /// Built from the entity models and the store schema already derived from them: attributes
    /// with their declared defaults, relationships with their resolved inverses and delete rules,
    /// the declared indexes (not the engines' own indexes of to-one keys), and the joins.
    static func recordedSchema(
        version: Int, models: [EntityModel], entities: [EntitySchema], joins: [JoinSchema]
    ) -> RecordedSchema {
        var recordedEntities: [RecordedEntity] = []
        for (model, entity) in zip(models, entities) {
            var attributes: [RecordedAttribute] = []
            var relationships: [RecordedRelationship] = []
            for (index, property) in model.properties.enumerated() {
                switch property.kind {
                case .attribute(let type, let isOptional, _):
                    let stored = property.column.map { model.defaults[$0] } ?? .null
                    attributes.append(
                        RecordedAttribute(
                            name: property.name, type: type, isOptional: isOptional,
                            defaultValue: RecordedValue(stored)))
                case .relationship:
                    guard let relation = model.relations[index] else { continue }
                    let kind: RecordedRelationship.Kind =
                        !relation.isToMany ? .toOne : relation.inverseIsToMany ? .manyToMany : .toMany
                    relationships.append(
                        RecordedRelationship(
                            name: property.name, target: relation.target.name,
                            inverse: relation.target.properties[relation.inverseProperty].name, kind: kind,
                            deleteRule: relation.deleteRule.rawValue, join: relation.joinName))
                }
            }
            let indexes = entity.indexes.compactMap { index -> RecordedIndex? in
                // The engines' index of a to-one key comes with the relationship, not a declaration.
                if index.columns.count == 1, entity.columns[index.columns[0]].type == .reference { return nil }
                return RecordedIndex(
                    name: index.name, attributes: index.columns.map { entity.columns[$0].name },
                    isUnique: index.isUnique)
            }
            recordedEntities.append(
                RecordedEntity(
                    name: entity.name, columns: entity.columns.map(\.name), attributes: attributes,
                    relationships: relationships, indexes: indexes))
        }
        let recordedJoins = joins.map { join in
            RecordedJoin(name: join.name, left: entities[join.leftEntity].name, right: entities[join.rightEntity].name)
        }
        return RecordedSchema(version: version, entities: recordedEntities, joins: recordedJoins)
    }
}
