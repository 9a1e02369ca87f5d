import StrataStorage

extension ManagedObject {
    /// The context for relationship work, stopping the program for objects not in one.
    private func relationContext(_ property: Int) -> ObjectContext {
        checkAccess { propertyName(property) }
        guard let context = link?.context else {
            Misuse.fail(
                """
                \(propertyName(property)) was used on an object that is not in a live context; insert the object \
                before relating it
                """
            )
        }
        return context
    }

    private func relation(_ property: Int) -> RelationModel {
        resolvedModel.relations[property]!
    }

    /// Stops the program when `object` is not in this object's context; the message is built
    /// only then.
    @inline(__always)
    private func requireSameContext(_ object: ManagedObject, _ context: ObjectContext, _ api: @autoclosure () -> String)
    {
        if object.link !== link { context.requireOwned(object, api()) }
    }

    // MARK: To-one

    /// The target of a to-one relationship, loading it on first access.
    @usableFromInline
    final func toOneTarget(_ property: Int) -> ManagedObject? {
        if state.contains(.prototype) {
            guard case .relationship(let declaration) = resolvedModel.properties[property].kind else { return nil }
            return ModelRegistry.prototype(for: declaration.targetType)
        }
        return resolvedToOneTarget(property, context: relationContext(property))
    }

    /// ``toOneTarget(_:)`` once the caller has checked access and found the context.
    private func resolvedToOneTarget(_ property: Int, context: ObjectContext) -> ManagedObject? {
        if let cached = sideState?[toOne: property] { return cached }
        let target = storedToOneTarget(property, relation: relation(property), context: context)
        if let target { madeSideState[toOne: property] = .some(target) }
        return target ?? nil
    }

    /// The target the foreign-key column names, loaded through the context (not cached); nil
    /// when the load failed (kept by the context: ``ObjectContext/recordFailedLoad(_:)``), `.some(nil)`
    /// when the column names none.
    private func storedToOneTarget(_ property: Int, relation: RelationModel, context: ObjectContext) -> ManagedObject??
    {
        guard case .integer(let key) = values[resolvedModel.column(ofProperty: property)] else { return .some(nil) }
        do {
            return .some(try context.object(model: relation.target, key: key))
        } catch {
            context.recordFailedLoad(error)
            return nil
        }
    }

    /// The target of a to-one relationship as the declared class `Target`.
    ///
    /// The schema builds a relationship's target model from `Target` itself (and refuses two
    /// classes with one entity name), so the checked cast cannot fail unless that invariant is
    /// broken; if it is, the program stops naming the property and both classes rather than
    /// returning a wrong object.
    @usableFromInline
    final func toOneTarget<Target: ManagedObject>(_ property: Int, as _: Target.Type) -> Target? {
        guard let target = toOneTarget(property) else { return nil }
        return checkedMember(target, of: property, as: Target.self)
    }

    /// `object` as `Target`, the declared class of relationship `property` (see
    /// ``toOneTarget(_:as:)`` for why the cast cannot fail).
    @inline(__always)
    final func checkedMember<Target: ManagedObject>(
        _ object: ManagedObject, of property: Int, as _: Target.Type
    ) -> Target {
        if let typed = object as? Target { return typed }
        wrongMemberClass(object, property, Target.self)
    }

    @inline(never)
    private final func wrongMemberClass(_ object: ManagedObject, _ property: Int, _ expected: Any.Type) -> Never {
        Misuse.fail(
            """
            \(propertyName(property)) holds \(object), a \(type(of: object)), where its declaration says \
            \(expected). The schema builds every relationship's target from its declared class, so this is a bug \
            in Strata: please report it with this message
            """
        )
    }

    /// The ID of a to-one target, without loading it when it is saved.
    @usableFromInline
    final func toOneTargetID(_ property: Int) -> ObjectID? {
        if state.contains(.prototype) { return nil }
        _ = relationContext(property)
        if let cached = sideState?[toOne: property] { return cached?.objectID }
        guard case .integer(let key) = values[resolvedModel.properties[property].column!], let link else { return nil }
        return ObjectID(
            storeIdentifier: link.storeIdentifier, entityName: relation(property).target.name, kind: .permanent(key))
    }

    /// Sets a to-one relationship and keeps the inverse in sync; returns whether it changed.
    @usableFromInline @discardableResult
    final func setToOneTarget(_ property: Int, _ newTarget: ManagedObject?) -> Bool {
        if state.contains(.prototype) { return false }
        let context = relationContext(property)
        if let newTarget { requireSameContext(newTarget, context, self.propertyName(property)) }
        let model = resolvedModelReference
        let relation = model.model.relations[property]!
        let cache = madeSideState
        let oldTarget: ManagedObject?
        if let cached = cache[toOne: property] {
            oldTarget = cached
        } else {
            let stored = storedToOneTarget(property, relation: relation, context: context)
            oldTarget = stored ?? nil
            if let stored, oldTarget === newTarget { cache[toOne: property] = .some(stored) }
        }
        if oldTarget === newTarget { return false }
        cache[toOne: property] = .some(newTarget)
        setColumn(model.column(ofProperty: property), Self.foreignKey(of: newTarget))
        context.registerRelationChange(self)
        if relation.inverseIsToMany {
            if let oldTarget {
                oldTarget.sideState?.toMany[relation.inverseProperty]?.remove(self)
                context.registerTouch(oldTarget, property: relation.inverseProperty)
            }
            if let newTarget {
                newTarget.sideState?.toMany[relation.inverseProperty]?.insert(self)
                context.registerTouch(newTarget, property: relation.inverseProperty)
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
        return true
    }

    /// Sets the to-one state and column without touching the inverse.
    final func setToOneRaw(_ property: Int, _ target: ManagedObject?, context: ObjectContext) {
        madeSideState[toOne: property] = .some(target)
        setColumn(resolvedModel.column(ofProperty: property), Self.foreignKey(of: target))
        context.registerRelationChange(self)
    }

    /// The foreign-key value that refers to `target`: null until it has a permanent key.
    @inline(__always)
    private static func foreignKey(of target: ManagedObject?) -> StoredValue {
        if let target, target.key > 0 { .integer(target.key) } else { .null }
    }

    /// The key a to-one link to an object without a key yet reads as in
    /// ``valuesWithPendingLinks()``: no row has it, and no compiled constant is it.
    static let pendingLinkKey = Int64.min

    /// This object's values with every to-one link read as its target's key now, or as
    /// ``pendingLinkKey`` for a target without a key yet (an unsaved insert); nil when every
    /// column already holds that. A link's column is set when the link is made, and only a save
    /// brings it up to date: a target inserted unsaved leaves it null, and
    /// ``ObjectContext/obtainPermanentIDs(for:)`` gives the target a key without touching it.
    /// For filters judged in memory: the link is set, so `$0.account == nil` must not hold and
    /// `$0.$account == id` must.
    final func valuesWithPendingLinks() -> ContiguousArray<StoredValue>? {
        guard let sideState, let model else { return nil }
        var copy: ContiguousArray<StoredValue>?
        sideState.forEachToOne { property, target in
            guard let target else { return }
            let column = model.column(ofProperty: property)
            guard column >= 0 else { return }
            let current = StoredValue.integer(target.key > 0 ? target.key : Self.pendingLinkKey)
            guard values[column] != current else { return }
            if copy == nil { copy = ContiguousArray(values) }
            copy?[column] = current
        }
        return copy
    }

    // MARK: To-many

    /// The members of a to-many relationship (deleted objects excluded), loading them on first access.
    @usableFromInline
    final func toManyMembers(_ property: Int) -> [ManagedObject] {
        toManyStorage(property).filter { !$0.state.contains(.deleted) }
    }

    /// The loaded members of a to-many relationship in order, *including* objects deleted in
    /// this context and not saved yet (``RelatedObjects`` skips them); empty on prototypes.
    final func toManyStorage(_ property: Int) -> [ManagedObject] {
        if state.contains(.prototype) { return [] }
        return loadedSet(property).members
    }

    final func toManyContains(_ property: Int, _ object: ManagedObject) -> Bool {
        if state.contains(.prototype) { return false }
        return loadedSet(property).contains(object) && !object.state.contains(.deleted)
    }

    /// Relates `object`, updating its inverse; returns whether it was not related before.
    @discardableResult
    final func toManyInsert(_ property: Int, _ object: ManagedObject) -> Bool {
        if state.contains(.prototype) { return false }
        let context = relationContext(property)
        requireSameContext(object, context, "\(self.propertyName(property)).insert(_:)")
        let relation = relation(property)
        if relation.inverseIsToMany {
            return setLinked(object, true, through: relation, context: context)
        } else {
            return object.setToOneTarget(relation.inverseProperty, self)
        }
    }

    /// Unrelates `object`, updating its inverse; returns whether it was related before.
    @discardableResult
    final func toManyRemove(_ property: Int, _ object: ManagedObject) -> Bool {
        if state.contains(.prototype) { return false }
        let context = relationContext(property)
        requireSameContext(object, context, "\(self.propertyName(property)).remove(_:)")
        let relation = relation(property)
        if relation.inverseIsToMany {
            return setLinked(object, false, through: relation, context: context)
        } else if object.toOneTarget(relation.inverseProperty) === self {
            return object.setToOneTarget(relation.inverseProperty, nil)
        }
        return false
    }

    /// Links or unlinks a many-to-many pair on both sides, recording the join change and
    /// touching both rows. No effect when the pair is already in the wanted state.
    @discardableResult
    private func setLinked(
        _ object: ManagedObject, _ linked: Bool, through relation: RelationModel, context: ObjectContext
    ) -> Bool {
        let mine = loadedSet(relation.property)
        guard mine.contains(object) != linked else { return false }
        let theirs = object.loadedSet(relation.inverseProperty)
        if linked {
            mine.insert(object)
            theirs.insert(self)
        } else {
            mine.remove(object)
            theirs.remove(self)
        }
        context.recordJoinChange(relation, owner: self, member: object, isLink: linked)
        context.registerTouch(self, property: relation.property)
        context.registerTouch(object, property: relation.inverseProperty)
        return true
    }

    @usableFromInline
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
        if let loaded = sideState?.toMany[property] { return loaded }
        let relation = relation(property)
        let set: RelatedSet
        do {
            set = try context.faultToMany(relation, of: self)
        } catch {
            // Not kept as the loaded set: the next read tries again.
            context.recordFailedLoad(error)
            return RelatedSet([])
        }
        madeSideState.toMany[property] = set
        return set
    }

    /// The set of a to-many property if it is loaded; nil when it is still a fault.
    final func loadedToMany(_ property: Int) -> RelatedSet? {
        sideState?.toMany[property]
    }

    /// Installs the loaded set of a to-many property (batch faulting, prefetching), unless one
    /// is loaded already: a loaded set may hold unsaved changes and is never replaced.
    final func installToMany(_ property: Int, members: [ManagedObject]) {
        if sideState?.toMany[property] != nil { return }
        madeSideState.toMany[property] = RelatedSet(members)
    }
}
