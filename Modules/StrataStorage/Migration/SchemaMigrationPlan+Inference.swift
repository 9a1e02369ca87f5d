import Foundation

extension SchemaMigrationPlan {
    /// The core's planner: the steps that take a store from `source` to `target` without user code.
    ///
    /// Renames are applied to `source` first (so a renamed attribute is not seen as removed and
    /// added); then every ``SchemaDifference`` of ``RecordedSchema/differences(from:to:)`` becomes
    /// steps, sorted so drops come before renames, column changes before index creation.
    ///
    /// Inferred: entities and attributes added (optional or with a default) or removed, renames,
    /// required → optional, optional → required with a default, default changes, relationships
    /// added or removed, delete-rule changes, indexes and unique constraints added or removed,
    /// joins added or removed, column reorders. Anything else is refused.
    ///
    /// ```swift
    /// let plan = try SchemaMigrationPlan.infer(from: stored, to: model)
    /// ```
    /// - Parameters:
    ///   - source: the schema the store recorded.
    ///   - target: the model's schema.
    ///   - renames: the model's `originalName`s (new name → the store's name).
    /// - Throws: ``StrataError/schemaMismatch(storeVersion:modelVersion:differences:)`` when
    ///   `source`'s version is not older than `target`'s (a newer store, or the same version with
    ///   another shape: a store is never migrated without a version change);
    ///   ``StrataError/migrationNotInferable(storeVersion:modelVersion:refused:)`` listing every
    ///   difference that needs a custom stage (nothing is planned then).
    public static func infer(
        from source: RecordedSchema, to target: RecordedSchema, renames: SchemaRenames = SchemaRenames()
    ) throws(StrataError) -> SchemaMigrationPlan {
        guard source.version < target.version else {
            throw .schemaMismatch(
                storeVersion: source.version, modelVersion: target.version,
                differences: RecordedSchema.differences(from: source, to: target))
        }
        return try infer(
            from: source, to: target, renames: renames, allowingReplacement: false, storeVersion: source.version)
    }

    /// The planner as a migration run uses it: no version guard (a store that drifted from its
    /// declared version is brought back to it), and, in a custom stage (`allowingReplacement`),
    /// changes that lose data are planned as a drop and an add filled with a placeholder that
    /// the stage's `didMigrate` is expected to overwrite: a type change, a required attribute
    /// added without a default, optional → required without one, a relationship whose target,
    /// kind or inverse changed.
    static func infer(
        from source: RecordedSchema, to target: RecordedSchema, renames: SchemaRenames, allowingReplacement: Bool,
        storeVersion: Int
    ) throws(StrataError) -> SchemaMigrationPlan {
        var refused: [SchemaDifference] = []
        let (renamed, initialSteps) = try applying(renames, to: source, target: target)
        var steps = initialSteps
        for difference in RecordedSchema.differences(from: renamed, to: target) {
            if let step = step(for: difference, target: target) {
                steps.append(step)
            } else if allowingReplacement, let replacement = replacement(for: difference, target: target) {
                steps += replacement
            } else {
                refused.append(difference)
            }
        }
        guard refused.isEmpty else {
            throw .migrationNotInferable(storeVersion: storeVersion, modelVersion: target.version, refused: refused)
        }
        let ordered = steps.enumerated().sorted { ($0.element.phase, $0.offset) < ($1.element.phase, $1.offset) }
        return SchemaMigrationPlan(source: source, target: target, steps: ordered.map(\.element))
    }

    /// The steps that replace what a difference changes, losing the old values (custom stages only).
    private static func replacement(
        for difference: SchemaDifference, target: RecordedSchema
    ) -> [SchemaMigrationStep]? {
        func attribute(_ entity: String, _ name: String) -> RecordedAttribute? {
            target.entity(named: entity)?.attributes.first { $0.name == name }
        }
        switch difference {
        case .attributeAdded(let entity, let added):
            return [.addAttribute(entity: entity, added, fill: placeholder(for: added))]
        case .attributeTypeChanged(let entity, let name, _, _):
            guard let added = attribute(entity, name) else { return nil }
            return [
                .dropAttribute(entity: entity, attribute: name),
                .addAttribute(entity: entity, added, fill: placeholder(for: added)),
            ]
        case .attributeOptionalityChanged(let entity, let name, false):
            guard let declared = attribute(entity, name) else { return nil }
            return [.makeRequired(entity: entity, attribute: name, fill: placeholder(for: declared))]
        case .relationshipChanged(let entity, let from, let to):
            return [.dropRelationship(entity: entity, from), .addRelationship(entity: entity, to)]
        default:
            return nil
        }
    }

    /// The value a replaced attribute holds until `didMigrate` sets it: its default, or the
    /// type's zero (false, 0, "", the reference date, empty data, the nil UUID), or null when optional.
    private static func placeholder(for attribute: RecordedAttribute) -> StoredValue {
        if let value = attribute.defaultValue?.value, value != .null { return value }
        if attribute.isOptional { return .null }
        switch attribute.type {
        case .bool, .int, .int64: return .integer(0)
        case .double, .date: return .real(0)
        case .string: return .text("")
        case .data: return .blob(Data())
        case .uuid: return .blob(Data(count: 16))
        case .reference: return .null
        }
    }

    /// The step for one difference, or nil when it cannot be inferred.
    private static func step(for difference: SchemaDifference, target: RecordedSchema) -> SchemaMigrationStep? {
        switch difference {
        case .entityAdded(let entity):
            return .addEntity(entity)
        case .entityRemoved(let entity):
            return .dropEntity(entity.name)
        case .attributeAdded(let entity, let attribute):
            let fill = attribute.defaultValue?.value ?? .null
            guard attribute.isOptional || fill != .null else { return nil }
            return .addAttribute(entity: entity, attribute, fill: fill)
        case .attributeRemoved(let entity, let attribute):
            return .dropAttribute(entity: entity, attribute: attribute.name)
        case .attributeOptionalityChanged(let entity, let attribute, let isOptional):
            if isOptional { return .makeOptional(entity: entity, attribute: attribute) }
            let declared = target.entity(named: entity)?.attributes.first { $0.name == attribute }
            guard let fill = declared?.defaultValue?.value, fill != .null else { return nil }
            return .makeRequired(entity: entity, attribute: attribute, fill: fill)
        case .attributeDefaultChanged(let entity, let attribute, _, let to):
            return .changeDefault(entity: entity, attribute: attribute, to: to)
        case .relationshipAdded(let entity, let relationship):
            return .addRelationship(entity: entity, relationship)
        case .relationshipRemoved(let entity, let relationship):
            return .dropRelationship(entity: entity, relationship)
        case .relationshipChanged(let entity, let from, let to):
            var sameButRule = from
            sameButRule.deleteRule = to.deleteRule
            guard sameButRule == to else { return nil }
            return .changeDeleteRule(entity: entity, relationship: to.name, to: to.deleteRule)
        case .indexAdded(let entity, let index):
            return .addIndex(entity: entity, index)
        case .indexRemoved(let entity, let index):
            return .dropIndex(entity: entity, name: index.name)
        case .uniqueConstraintAdded(let entity, let index):
            return .addUniqueConstraint(entity: entity, index)
        case .uniqueConstraintRemoved(let entity, let index):
            return .dropUniqueConstraint(entity: entity, name: index.name)
        case .joinAdded(let join):
            return .addJoin(join)
        case .joinRemoved(let join):
            return .dropJoin(join.name)
        case .columnOrderChanged(let entity, _, let to):
            return .reorderColumns(entity: entity, columns: to)
        case .attributeTypeChanged, .unrecordedStoreDiffers:
            return nil
        }
    }

    /// After entity renames, a join whose name changed with its entities (the same two entities,
    /// the same relationship) is renamed rather than dropped and re-created, so its links are
    /// kept. Join names order their sides by name, so a rename can also swap which entity is on
    /// the left: the join's sides are then swapped too (``SchemaMigrationStep/swapJoinSides(_:)``).
    static func renameJoins(
        of schema: inout RecordedSchema, to target: RecordedSchema, steps: inout [SchemaMigrationStep]
    ) {
        for index in schema.joins.indices {
            let join = schema.joins[index]
            guard !target.joins.contains(where: { $0.name == join.name }) else { continue }
            let relationship = schema.entity(named: join.left)?.relationships.first { $0.join == join.name }
            let candidates = target.joins.filter { candidate in
                let sameSides = candidate.left == join.left && candidate.right == join.right
                let swappedSides = candidate.left == join.right && candidate.right == join.left
                return (sameSides || swappedSides)
                    && !schema.joins.contains(where: { $0.name == candidate.name })
                    && target.entity(named: join.left)?.relationships.contains {
                        $0.join == candidate.name && $0.name == relationship?.name
                    } == true
            }
            guard candidates.count == 1, let renamed = candidates.first else { continue }
            schema.joins[index] = renamed
            for entity in schema.entities.indices {
                for relation in schema.entities[entity].relationships.indices
                where schema.entities[entity].relationships[relation].join == join.name {
                    schema.entities[entity].relationships[relation].join = renamed.name
                }
            }
            steps.append(.renameJoin(from: join.name, to: renamed.name))
            if renamed.left != join.left { steps.append(.swapJoinSides(renamed.name)) }
        }
    }
}
