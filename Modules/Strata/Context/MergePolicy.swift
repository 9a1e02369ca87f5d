import StrataStorage

/// What ``ObjectContext/save()`` does when rows it writes changed in the store since the
/// context read them.
///
/// ```swift
/// try await context.perform {
///     context.mergePolicy = .storeWins
///     …
///     try context.save()
/// }
/// ```
///
/// - Warning: the merging policies decide per property, not per meaning. On a value computed
///   from what was read — a balance, a counter, a running total — **both** merging policies
///   lose an update: the other writer's change is overwritten (`.objectWins`) or this one's
///   is dropped (`.storeWins`). For such work keep `.error` and re-run the whole unit of work
///   in a fresh context with ``ContextFactory/performUnitOfWork(retries:_:)``.
public enum MergePolicy: Sendable, Hashable {
    /// The default: the save fails with ``StrataStorage/StrataError/conflict(_:)`` listing every conflicting
    /// object with its stored and expected versions, and nothing is written.
    case error
    /// The store's version of a conflicting object wins: this context's unsaved changes to that
    /// object are dropped (its values become the stored ones; a delete of it is cancelled), and
    /// the rest of the save goes ahead.
    case storeWins
    /// This context's changes win, property by property: for a conflicting object, each
    /// property this context changed keeps this context's value; every other property takes
    /// the stored value. A delete goes ahead. A row deleted in the store stays a conflict.
    case objectWins
}

extension ObjectContext {
    /// How ``save()`` handles conflicts; ``MergePolicy/error`` by default. Set it inside `perform`.
    public var mergePolicy: MergePolicy {
        get {
            requireInside("ObjectContext.mergePolicy")
            return policy
        }
        set {
            requireInside("ObjectContext.mergePolicy")
            policy = newValue
        }
    }

    /// Adjusts the conflicting objects according to the merge policy so the save can be retried.
    /// - Throws: the conflict again when the policy cannot resolve it.
    func merge(_ conflicts: [VersionConflict]) throws {
        let reader = try engine.makeReader()
        defer { reader.close() }
        for conflict in conflicts {
            guard let model = schema.model(named: conflict.objectID.entityName), let key = conflict.objectID.primaryKey,
                let number = schema.number(of: model), let object = registry[number][key],
                !object.state.contains(.inserted)
            else { throw StrataError.conflict(conflicts) }
            // A row required unchanged that changed is the very failure the caller asked for.
            if unchangedRequirements.contains(where: { $0 === object }) { throw StrataError.conflict(conflicts) }
            if guards(object, key: key, entity: number) { throw StrataError.conflict(conflicts) }
            guard let stored = try reader.row(entity: number, key: key) else {
                // Deleted in the store: a pending delete of it is moot; anything else stays a conflict.
                if object.state.contains(.deleted) {
                    deleted.removeAll { $0 === object }
                    registry[number][key] = nil
                    object.state.insert(.gone)
                    continue
                }
                throw StrataError.conflict(conflicts)
            }
            try Self.checkShape(stored, of: model)
            switch policy {
            case .error:
                throw StrataError.conflict(conflicts)
            case .storeWins:
                object.replaceValues(with: stored.values)
                object.committedValues = nil
                object.sideState?.forgetRelationships()
                object.state.remove([.updated, .touched, .relationDirty])
                if object.state.contains(.deleted) {
                    object.state.remove(.deleted)
                    deleted.removeAll { $0 === object }
                }
                updated.removeAll { $0 === object }
                touched.removeAll { $0 === object }
                relationDirty.removeAll { $0 === object }
            case .objectWins:
                if let base = object.committedValues {
                    var merged = stored.values
                    for column in merged.indices where object.values[column] != base[column] {
                        merged[column] = object.values[column]
                    }
                    object.replaceValues(with: merged)
                    object.committedValues = stored.values
                }
            }
            object.version = stored.version
        }
    }

    /// Whether a conflict on `object` comes from a guarded result set (``requireUnchangedResults(of:)``):
    /// a guard of its entity expected the row, or this save does not write the row at all (it
    /// appeared in a guarded set). A merge policy never merges such a conflict away.
    private func guards(_ object: ManagedObject, key: Int64, entity: Int) -> Bool {
        let written = !object.state.isDisjoint(with: [.updated, .touched, .deleted])
        return resultGuards.contains { $0.entity == entity && ($0.expected[key] != nil || !written) }
    }
}
