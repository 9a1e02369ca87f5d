extension ObjectContext {
    /// Discards every unsaved change: inserted objects are dropped, updated objects get their
    /// saved values back, deletions are undone, relationships are reloaded on next access.
    /// Rows passed to ``requireUnchanged(_:)``, results guarded with
    /// ``requireUnchangedResults(of:)`` and refused inserts (of classes the schema does not list)
    /// are forgotten too.
    public func rollback() {
        requireInside("ObjectContext.rollback()")
        if case .running = validation { validation = .discarded("rollback()") }
        if !inserted.isEmpty { hasForgottenObjects = true }
        for object in inserted {
            if object.key > 0, let number = schema.number(of: object.model!) { registry[number][object.key] = nil }
            temporaries[object.temporarySerial] = nil
            object.state.insert(.gone)
        }
        for object in updated where !object.state.contains(.inserted) {
            if let committed = object.committedValues { object.replaceValues(with: committed) }
        }
        for object in inserted + updated + touched + deleted + relationDirty {
            object.committedValues = nil
            object.state.remove([.inserted, .updated, .touched, .relationDirty])
            if !object.state.contains(.gone) { object.state.remove(.deleted) }
        }
        dropRelationshipCaches()
        clearChangeTracking()
        failedLoad = nil
    }

    /// Forgets every object and unsaved change; objects fetched before are no longer valid.
    public func reset() {
        requireInside("ObjectContext.reset()")
        if case .running = validation { validation = .discarded("reset()") }
        hasForgottenObjects = true
        for object in inserted { object.state.insert(.gone) }
        for entity in registry {
            for object in entity.values {
                object.sideState?.forgetRelationships()
                object.state.insert(.gone)
            }
        }
        objects.removeRegisteredObjects()
        objects.removeFetchGroups()
        temporaries = [:]
        clearChangeTracking()
        failedLoad = nil
        endSnapshot()
    }

    /// Forgets every pending change list (the objects' own flags are handled by the caller).
    func clearChangeTracking() {
        inserted = []
        updated = []
        touched = []
        deleted = []
        relationDirty = []
        pendingLinks = [:]
        unchangedRequirements = []
        resultGuards = []
        pendingCursorMoves = []
        pendingBatches = []
        changedToMany = [:]
        refusedInserts = []
    }
}
