/// Lazily created per-object relationship state: resolved to-one targets and loaded to-many sets.
final class RelationState {
    /// Property → resolved target (`.some(nil)` when resolved to no object).
    var toOne: [Int: ManagedObject?] = [:]
    var toMany: [Int: RelatedSet] = [:]
}

/// A loaded to-many relationship: members in order, plus their identities.
final class RelatedSet {
    var members: [ManagedObject]
    var identities: Set<ObjectIdentifier>

    init(_ members: [ManagedObject]) {
        self.members = members
        self.identities = Set(members.map(ObjectIdentifier.init))
    }

    func insert(_ object: ManagedObject) {
        if identities.insert(ObjectIdentifier(object)).inserted { members.append(object) }
    }

    func remove(_ object: ManagedObject) {
        if identities.remove(ObjectIdentifier(object)) != nil { members.removeAll { $0 === object } }
    }

    func contains(_ object: ManagedObject) -> Bool { identities.contains(ObjectIdentifier(object)) }
}

extension ManagedObject {
    /// The context for relationship work, stopping the program for objects not in one.
    private func relationContext(_ property: Int) -> ObjectContext {
        let model = resolvedModel
        checkAccess { "\(model.name).\(model.properties[property].name)" }
        guard let context = link?.context else {
            Misuse.fail("\(model.name).\(model.properties[property].name) was used on an object that is not in a live context; insert the object before relating it")
        }
        return context
    }

    private func relation(_ property: Int) -> RelationModel {
        resolvedModel.relations[property]!
    }

    private var relationState: RelationState {
        if let relations { return relations }
        let made = RelationState()
        relations = made
        return made
    }

    // MARK: To-one

    /// The target of a to-one relationship, loading it on first access.
    final func toOneTarget(_ property: Int) -> ManagedObject? {
        if state.contains(.prototype) {
            guard case .relationship(let declaration) = resolvedModel.properties[property].kind else { return nil }
            return ModelRegistry.prototype(for: declaration.targetType)
        }
        let context = relationContext(property)
        if let cached = relations?.toOne[property] { return cached }
        let relation = relation(property)
        var target: ManagedObject?
        if case .integer(let key) = values[resolvedModel.properties[property].column!] {
            do {
                target = try context.object(model: relation.target, key: key)
            } catch {
                Misuse.fail("\(resolvedModel.name).\(resolvedModel.properties[property].name) could not be loaded: \(error)")
            }
        }
        relationState.toOne[property] = .some(target)
        return target
    }

    /// The ID of a to-one target, without loading it when it is saved.
    final func toOneTargetID(_ property: Int) -> ObjectID? {
        if state.contains(.prototype) { return nil }
        _ = relationContext(property)
        if let cached = relations?.toOne[property] { return cached?.objectID }
        guard case .integer(let key) = values[resolvedModel.properties[property].column!], let link else { return nil }
        return ObjectID(storeIdentifier: link.storeIdentifier, entityName: relation(property).target.name, kind: .permanent(key))
    }

    /// Sets a to-one relationship and keeps the inverse in sync.
    final func setToOneTarget(_ property: Int, _ newTarget: ManagedObject?) {
        if state.contains(.prototype) { return }
        let context = relationContext(property)
        if let newTarget { context.requireOwned(newTarget, "\(resolvedModel.name).\(resolvedModel.properties[property].name)") }
        let relation = relation(property)
        let oldTarget = toOneTarget(property)
        if oldTarget === newTarget { return }
        setToOneRaw(property, newTarget, context: context)
        if relation.inverseIsToMany {
            if let oldTarget {
                oldTarget.relations?.toMany[relation.inverseProperty]?.remove(self)
                context.registerTouch(oldTarget)
            }
            if let newTarget {
                newTarget.relations?.toMany[relation.inverseProperty]?.insert(self)
                context.registerTouch(newTarget)
            }
        } else {
            // One-to-one: the old target forgets us, the new target's old partner forgets it.
            if let oldTarget { oldTarget.setToOneRaw(relation.inverseProperty, nil, context: context) }
            if let newTarget {
                if let displaced = newTarget.toOneTarget(relation.inverseProperty), displaced !== self {
                    displaced.setToOneRaw(property, nil, context: context)
                }
                newTarget.setToOneRaw(relation.inverseProperty, self, context: context)
            }
        }
    }

    /// Sets the to-one state and column without touching the inverse.
    final func setToOneRaw(_ property: Int, _ target: ManagedObject?, context: ObjectContext) {
        relationState.toOne[property] = .some(target)
        let keyValue: StoredValue = (target?.key ?? 0) > 0 ? .integer(target!.key) : .null
        setColumn(resolvedModel.properties[property].column!, keyValue)
        context.registerRelationChange(self)
    }

    // MARK: To-many

    /// The members of a to-many relationship (deleted objects excluded), loading them on first access.
    final func toManyMembers(_ property: Int) -> [ManagedObject] {
        if state.contains(.prototype) { return [] }
        return loadedSet(property).members.filter { !$0.state.contains(.deleted) }
    }

    final func toManyContains(_ property: Int, _ object: ManagedObject) -> Bool {
        if state.contains(.prototype) { return false }
        return loadedSet(property).contains(object) && !object.state.contains(.deleted)
    }

    final func toManyInsert(_ property: Int, _ object: ManagedObject) {
        if state.contains(.prototype) { return }
        let context = relationContext(property)
        context.requireOwned(object, "\(resolvedModel.name).\(resolvedModel.properties[property].name).insert(_:)")
        let relation = relation(property)
        if relation.inverseIsToMany {
            setLinked(object, true, through: relation, context: context)
        } else {
            object.setToOneTarget(relation.inverseProperty, self)
        }
    }

    final func toManyRemove(_ property: Int, _ object: ManagedObject) {
        if state.contains(.prototype) { return }
        let context = relationContext(property)
        context.requireOwned(object, "\(resolvedModel.name).\(resolvedModel.properties[property].name).remove(_:)")
        let relation = relation(property)
        if relation.inverseIsToMany {
            setLinked(object, false, through: relation, context: context)
        } else if object.toOneTarget(relation.inverseProperty) === self {
            object.setToOneTarget(relation.inverseProperty, nil)
        }
    }

    /// Links or unlinks a many-to-many pair on both sides, recording the join change and
    /// touching both rows. No effect when the pair is already in the wanted state.
    private func setLinked(_ object: ManagedObject, _ linked: Bool, through relation: RelationModel, context: ObjectContext) {
        let mine = loadedSet(relation.property)
        guard mine.contains(object) != linked else { return }
        let theirs = object.loadedSet(relation.inverseProperty)
        if linked {
            mine.insert(object)
            theirs.insert(self)
        } else {
            mine.remove(object)
            theirs.remove(self)
        }
        context.recordJoinChange(relation, owner: self, member: object, isLink: linked)
        context.registerTouch(self)
        context.registerTouch(object)
    }

    final func replaceToMany(_ property: Int, with objects: [ManagedObject]) {
        let wanted = Set(objects.map(ObjectIdentifier.init))
        for member in toManyMembers(property) where !wanted.contains(ObjectIdentifier(member)) {
            toManyRemove(property, member)
        }
        for object in objects { toManyInsert(property, object) }
    }

    /// The loaded set for a to-many property, loading it from the snapshot on first use and
    /// merging this context's unsaved relationship changes.
    final func loadedSet(_ property: Int) -> RelatedSet {
        let context = relationContext(property)
        if let loaded = relations?.toMany[property] { return loaded }
        let relation = relation(property)
        let set: RelatedSet
        do {
            set = RelatedSet(try context.loadRelated(relation, of: self))
        } catch {
            Misuse.fail("\(resolvedModel.name).\(resolvedModel.properties[property].name) could not be loaded: \(error)")
        }
        relationState.toMany[property] = set
        return set
    }
}
