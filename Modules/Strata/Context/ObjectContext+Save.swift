extension ObjectContext {
    /// Writes every unsaved change in one atomic commit.
    ///
    /// In order: delete rules are applied (cascade, nullify, deny), every inserted and updated
    /// object is validated (NaN values, uniqueness among unsaved objects,
    /// ``ManagedObject/validateForSave()``), unsaved objects get permanent IDs, and one change
    /// set — every row carrying the version it was read at — goes to the engine, which commits
    /// all of it or nothing.
    ///
    /// With a ``mergePolicy`` other than `.error`, conflicting objects are merged and the
    /// commit is retried (a bounded number of times).
    ///
    /// After a failed save the context keeps its unsaved changes (including the effects of
    /// delete rules), so you can inspect them, fix and retry, or discard the context.
    /// After a successful save the next read sees a fresh snapshot.
    ///
    /// ```swift
    /// try await context.perform {
    ///     from.balance -= amount
    ///     to.balance += amount
    ///     try context.save()          // both or neither
    /// }
    /// ```
    /// - Throws: ``StrataError/validation(_:)``, ``StrataError/constraintViolation(entity:attributes:)``,
    ///   ``StrataError/conflict(_:)`` when another context saved the same rows first (nothing is
    ///   written), errors thrown by `validateForSave()`, `.misuse` outside `perform`, and engine
    ///   errors (`.busy`, `.storeFull`, `.io`, `.storeCorrupt`).
    public func save() throws {
        try checkInside("ObjectContext.save()")
        guard !inserted.isEmpty || !updated.isEmpty || !deleted.isEmpty || !touched.isEmpty || !pendingLinks.isEmpty else { return }
        try applyDeleteRules()
        try validatePendingObjects()
        try assignPermanentKeys(inserted.filter { !$0.state.contains(.deleted) })
        var changes = try buildChangeSet()
        endSnapshot()
        var merges = 0
        while !changes.isEmpty {
            do {
                try engine.commit(changes)
                break
            } catch StrataError.conflict(let conflicts) where policy != .error && merges < 16 {
                merges += 1
                try merge(conflicts)
                changes = try buildChangeSet()
            }
        }
        didCommit()
    }

    /// Applies delete rules until no new deletions appear.
    private func applyDeleteRules() throws {
        var issues: [ValidationIssue] = []
        var index = 0
        while index < deleted.count {
            let object = deleted[index]
            index += 1
            guard let model = object.model else { continue }
            for case let relation? in model.relations {
                let property = model.properties[relation.property].name
                if relation.isToMany {
                    let members = object.toManyMembers(relation.property)
                    switch relation.deleteRule {
                    case .deny:
                        if !members.isEmpty {
                            issues.append(ValidationIssue(entity: model.name, property: property, message: "cannot delete while \(members.count) related \(relation.target.name) object(s) exist (deny rule)"))
                        }
                    case .cascade:
                        for member in members { delete(member) }
                    case .nullify:
                        for member in members { object.toManyRemove(relation.property, member) }
                    }
                } else if let target = object.toOneTarget(relation.property), !target.state.contains(.deleted) {
                    switch relation.deleteRule {
                    case .deny:
                        issues.append(ValidationIssue(entity: model.name, property: property, message: "cannot delete while it refers to a \(relation.target.name) (deny rule)"))
                    case .cascade:
                        delete(target)
                        object.setToOneTarget(relation.property, nil)
                    case .nullify:
                        object.setToOneTarget(relation.property, nil)
                    }
                }
            }
        }
        if !issues.isEmpty { throw StrataError.validation(issues) }
    }

    /// Checks inserted and updated objects before anything is written.
    private func validatePendingObjects() throws {
        var issues: [ValidationIssue] = []
        let pending = (inserted + updated).filter { !$0.state.contains(.deleted) }
        for object in pending {
            guard let model = object.model else { continue }
            for property in model.properties {
                guard let column = property.column, case .real(let value) = object.values[column], value.isNaN else { continue }
                issues.append(ValidationIssue(entity: model.name, property: property.name, message: "NaN cannot be stored; use nil or a number"))
            }
        }
        if !issues.isEmpty { throw StrataError.validation(issues) }
        try checkUniquenessAmongPending(pending)
        for object in pending { try object.validateForSave() }
    }

    /// Two unsaved objects may not share values under a unique index (the engine checks the store).
    private func checkUniquenessAmongPending(_ pending: [ManagedObject]) throws {
        let byModel = Dictionary(grouping: pending) { ObjectIdentifier($0.model!) }
        for group in byModel.values where group.count > 1 {
            let model = group[0].model!
            let entity = schema.storeSchema.entities[entityNumber(model)]
            for index in entity.indexes where index.isUnique {
                var seen = Set<[StoredValue]>()
                for object in group {
                    let values = index.columns.map { object.values[$0] }
                    if values.contains(where: \.isNull) { continue }
                    if !seen.insert(values).inserted {
                        throw StrataError.constraintViolation(entity: model.name, attributes: index.columns.map { entity.columns[$0].name })
                    }
                }
            }
        }
    }

    /// Resolves foreign keys of changed relationships now that every target has a key.
    private func syncForeignKeys() {
        for object in relationDirty where !object.state.contains(.gone) {
            guard let model = object.model, let toOne = object.relations?.toOne else { continue }
            for (property, target) in toOne {
                guard let column = model.properties[property].column else { continue }
                let value: StoredValue
                if let target, target.key > 0, !target.state.contains(.deleted) { value = .integer(target.key) } else { value = .null }
                if object.values[column] != value { object.setColumn(column, value) }
            }
        }
    }

    private func buildChangeSet() throws -> ChangeSet {
        syncForeignKeys()
        var changes = ChangeSet()
        for object in inserted where !object.state.contains(.deleted) {
            changes.inserts.append(RowWrite(entity: entityNumber(object.model!), key: object.key, expectedVersion: 0, values: object.values))
        }
        for object in updated where !object.state.contains(.deleted) && !object.state.contains(.inserted) {
            if object.committedValues == object.values && !object.state.contains(.touched) { continue }
            changes.updates.append(RowWrite(entity: entityNumber(object.model!), key: object.key, expectedVersion: object.version, values: object.values))
        }
        for object in touched where !object.state.contains(.deleted) && !object.state.contains(.updated) && !object.state.contains(.inserted) {
            changes.touches.append(RowVersionCheck(entity: entityNumber(object.model!), key: object.key, expectedVersion: object.version))
        }
        for object in deleted where object.key > 0 && !object.state.contains(.inserted) {
            changes.deletes.append(RowVersionCheck(entity: entityNumber(object.model!), key: object.key, expectedVersion: object.version))
        }
        for change in pendingLinks.values {
            guard !change.left.state.contains(.deleted), !change.right.state.contains(.deleted) else { continue }
            let link = JoinLink(join: change.join, leftKey: change.left.key, rightKey: change.right.key)
            if change.isLink { changes.links.append(link) } else { changes.unlinks.append(link) }
        }
        return changes
    }

    /// Brings every object's bookkeeping to the committed state.
    private func didCommit() {
        for object in inserted where !object.state.contains(.deleted) {
            object.version = 1
            temporaries[object.temporarySerial] = nil
        }
        for object in updated where !object.state.contains(.deleted) && !object.state.contains(.inserted) {
            if object.committedValues != object.values || object.state.contains(.touched) { object.version += 1 }
        }
        for object in touched where !object.state.contains(.deleted) && !object.state.contains(.updated) && !object.state.contains(.inserted) {
            object.version += 1
        }
        for object in deleted {
            if object.key > 0, let number = schema.number(of: object.model!) { registry[number][object.key] = nil }
            temporaries[object.temporarySerial] = nil
            object.state.insert(.gone)
        }
        for object in inserted + updated + touched + relationDirty {
            object.committedValues = nil
            object.state.remove([.inserted, .updated, .touched, .relationDirty])
        }
        clearChangeTracking()
    }

    /// Discards every unsaved change: inserted objects are dropped, updated objects get their
    /// saved values back, deletions are undone, relationships are reloaded on next access.
    public func rollback() {
        requireInside("ObjectContext.rollback()")
        for object in inserted {
            if object.key > 0, let number = schema.number(of: object.model!) { registry[number][object.key] = nil }
            temporaries[object.temporarySerial] = nil
            object.state.insert(.gone)
        }
        for object in updated where !object.state.contains(.inserted) {
            if let committed = object.committedValues { object.values = committed }
        }
        for object in inserted + updated + touched + deleted + relationDirty {
            object.committedValues = nil
            object.state.remove([.inserted, .updated, .touched, .relationDirty])
            if !object.state.contains(.gone) { object.state.remove(.deleted) }
        }
        for entity in registry { for object in entity.values { object.relations = nil } }
        clearChangeTracking()
    }

    /// Forgets every object and unsaved change; objects fetched before are no longer valid.
    public func reset() {
        requireInside("ObjectContext.reset()")
        for object in inserted { object.state.insert(.gone) }
        for entity in registry {
            for object in entity.values {
                object.relations = nil
                object.state.insert(.gone)
            }
        }
        registry = Array(repeating: [:], count: registry.count)
        temporaries = [:]
        clearChangeTracking()
        endSnapshot()
    }

    /// Forgets every pending change list (the objects' own flags are handled by the caller).
    private func clearChangeTracking() {
        inserted = []
        updated = []
        touched = []
        deleted = []
        relationDirty = []
        pendingLinks = [:]
    }
}
