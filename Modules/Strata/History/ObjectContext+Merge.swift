import StrataStorage

/// What ``ObjectContext/mergeChanges(from:)`` did to the objects a context holds.
///
/// ```swift
/// let merged = try context.mergeChanges(from: transactions)
/// for id in merged.deleted { print("gone:", id.uriRepresentation) }
/// ```
public struct MergeResult: Sendable, Hashable {
    /// Objects reloaded with their committed values.
    public var refreshed: [ObjectID] = []
    /// Objects deleted by the merged transactions: the context no longer holds them.
    public var deleted: [ObjectID] = []
    /// Objects changed elsewhere that keep this context's unsaved changes; saving them follows
    /// the context's ``ObjectContext/mergePolicy`` (`.conflict` by default).
    public var keptUnsaved: [ObjectID] = []
}

extension ObjectContext {
    /// Brings the objects this context holds up to date with history transactions committed
    /// elsewhere (Core Data's `mergeChanges(fromContextDidSave:)`), for the rare reader that
    /// keeps one context for a long time.
    ///
    /// For each change to an object the context holds:
    /// - **update**: the object is reloaded from the store and its relationships are faulted
    ///   again, unless it has unsaved changes here (then it keeps them; see
    ///   ``MergeResult/keptUnsaved``);
    /// - **delete**: the context lets the object go. It keeps its last values in memory, but
    ///   ``existingObject(with:)`` and fetches no longer return it, and saving a change to it
    ///   throws ``StrataStorage/StrataError/conflict(_:)``: a typed error, never a trap.
    /// Inserted objects are not loaded until fetched. Changes to other stores are ignored.
    ///
    /// ```swift
    /// for try await transaction in container.changes() {
    ///     try await longLived.perform { _ = try longLived.mergeChanges(from: [transaction]) }
    /// }
    /// ```
    /// - Throws: `.misuse` outside `perform`; the store's errors while reloading.
    @discardableResult
    public func mergeChanges(from transactions: [PersistentHistoryTransaction]) throws -> MergeResult {
        try checkInside("ObjectContext.mergeChanges(from:)")
        // The objects are reloaded from a snapshot taken now, after the merged commits.
        endSnapshot()
        var result = MergeResult()
        for transaction in transactions {
            for change in transaction.changes where change.objectID.storeIdentifier == storeIdentifier {
                guard case .permanent(let key) = change.objectID.kind,
                    let model = schema.model(named: change.objectID.entityName)
                        ?? schema.model(renamedFrom: change.objectID.entityName),
                    let number = schema.number(of: model), let object = registry[number][key]
                else { continue }
                switch change.kind {
                case .insert:
                    continue
                case .delete:
                    evict(object, number: number, key: key)
                    result.deleted.append(change.objectID)
                case .update:
                    if object.state.contains(.gone) { continue }
                    if object.hasChanges || object.state.contains(.relationDirty) {
                        result.keptUnsaved.append(change.objectID)
                    } else if try reload(object, model: model, number: number) {
                        result.refreshed.append(change.objectID)
                    } else {
                        evict(object, number: number, key: key)
                        result.deleted.append(change.objectID)
                    }
                }
            }
        }
        return result
    }

    /// Reloads a saved object without unsaved changes from the snapshot; false when its row is gone.
    private func reload(_ object: ManagedObject, model: EntityModel, number: Int) throws -> Bool {
        guard let row = try snapshot().row(entity: number, key: object.key) else { return false }
        try Self.checkShape(row, of: model)
        object.replaceValues(with: row.values)
        object.version = row.version
        object.sideState?.forgetRelationships()
        return true
    }

    /// Lets go of an object deleted elsewhere: out of the identity map and every change list.
    func evict(_ object: ManagedObject, number: Int, key: Int64) {
        _ = registry[number].removeValue(forKey: key)
        object.state.insert(.gone)
        if object.state.contains(.updated) { updated.removeAll { $0 === object } }
        if object.state.contains(.touched) { touched.removeAll { $0 === object } }
        if object.state.contains(.relationDirty) { relationDirty.removeAll { $0 === object } }
        object.state.remove([.updated, .touched, .relationDirty])
        object.committedValues = nil
        object.sideState?.forgetRelationships()
    }
}
