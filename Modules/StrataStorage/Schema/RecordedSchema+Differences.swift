extension RecordedSchema {
    /// Every way `model` differs from `recorded`, in model terms; empty when the shapes are the same.
    ///
    /// The version numbers are not compared here (the mismatch error carries them on their own).
    /// Entities, attributes, relationships and joins are matched by name, indexes by name; the
    /// list follows the recorded order, then the model's (removals and changes of an entity
    /// before its additions), so the same pair always gives the same list.
    ///
    /// ```swift
    /// let differences = RecordedSchema.differences(from: recorded, to: model)
    /// // ["`Book.isbn` was added: `String`, not optional, no default"]
    /// ```
    /// - Parameters:
    ///   - recorded: the schema the store recorded.
    ///   - model: the schema of the model classes opening it.
    public static func differences(from recorded: RecordedSchema, to model: RecordedSchema) -> [SchemaDifference] {
        var result: [SchemaDifference] = []
        for old in recorded.entities {
            guard let new = model.entity(named: old.name) else {
                result.append(.entityRemoved(old))
                continue
            }
            result += differences(from: old, to: new)
        }
        for new in model.entities where recorded.entity(named: new.name) == nil {
            result.append(.entityAdded(new))
        }
        for old in recorded.joins where !model.joins.contains(old) {
            result.append(.joinRemoved(old))
        }
        for new in model.joins where !recorded.joins.contains(new) {
            result.append(.joinAdded(new))
        }
        return result
    }

    private static func differences(from old: RecordedEntity, to new: RecordedEntity) -> [SchemaDifference] {
        let entity = new.name
        var result: [SchemaDifference] = []
        for before in old.attributes {
            guard let after = new.attributes.first(where: { $0.name == before.name }) else {
                result.append(.attributeRemoved(entity: entity, before))
                continue
            }
            if before.type != after.type {
                result.append(
                    .attributeTypeChanged(entity: entity, attribute: after.name, from: before.type, to: after.type))
            }
            if before.isOptional != after.isOptional {
                result.append(
                    .attributeOptionalityChanged(entity: entity, attribute: after.name, isOptional: after.isOptional))
            }
            if before.defaultValue != after.defaultValue {
                result.append(
                    .attributeDefaultChanged(
                        entity: entity, attribute: after.name, from: before.defaultValue, to: after.defaultValue))
            }
        }
        for after in new.attributes where !old.attributes.contains(where: { $0.name == after.name }) {
            result.append(.attributeAdded(entity: entity, after))
        }
        for before in old.relationships {
            guard let after = new.relationships.first(where: { $0.name == before.name }) else {
                result.append(.relationshipRemoved(entity: entity, before))
                continue
            }
            if before != after { result.append(.relationshipChanged(entity: entity, from: before, to: after)) }
        }
        for after in new.relationships where !old.relationships.contains(where: { $0.name == after.name }) {
            result.append(.relationshipAdded(entity: entity, after))
        }
        for before in old.indexes where !new.indexes.contains(before) {
            result.append(
                before.isUnique
                    ? .uniqueConstraintRemoved(entity: entity, before) : .indexRemoved(entity: entity, before))
        }
        for after in new.indexes where !old.indexes.contains(after) {
            result.append(
                after.isUnique ? .uniqueConstraintAdded(entity: entity, after) : .indexAdded(entity: entity, after))
        }
        // Columns both sides store, in each side's order: a reordering alone changes what a row means.
        let kept = old.columns.filter { new.columns.contains($0) }
        let keptNew = new.columns.filter { old.columns.contains($0) }
        if kept != keptNew {
            result.append(.columnOrderChanged(entity: entity, from: old.columns, to: new.columns))
        }
        return result
    }
}
