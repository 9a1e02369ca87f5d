import StrataStorage

extension BatchExpansion {
    /// Adds the batches' row writes to a save's change set.
    func addWrites(to changes: inout ChangeSet) {
        for (number, runs) in plainInserts.sorted(by: { $0.key < $1.key }) {
            changes.inserts.reserveCapacity(changes.inserts.count + runs.reduce(0) { $0 + $1.rows.count })
            for run in runs {
                for (key, values) in zip(run.keys, run.rows) {
                    changes.inserts.append(RowWrite(entity: number, key: key, expectedVersion: 0, values: values))
                }
            }
        }
        for number in order.keys.sorted() {
            guard let overlay = rows[number] else { continue }
            for key in order[number] ?? [] {
                guard let row = overlay[key] else { continue }
                switch (row.isInsert, row.isDeleted) {
                case (true, false):
                    changes.inserts.append(RowWrite(entity: number, key: key, expectedVersion: 0, values: row.values))
                case (true, true):
                    continue
                case (false, true):
                    changes.deletes.append(RowVersionCheck(entity: number, key: key, expectedVersion: row.version))
                case (false, false):
                    guard let original = row.original, row.values != original else { continue }
                    let changed = row.values.indices.filter { row.values[$0] != original[$0] }
                    changes.updates.append(
                        RowWrite(
                            entity: number, key: key, expectedVersion: row.version, values: row.values,
                            changedColumns: changed))
                }
            }
        }
    }

    /// The history of the batches' writes: inserts, updates with their changed properties, and
    /// deletes with the tombstones of `.preserveAfterDeletion` attributes.
    func historyChanges() -> [HistoryChange] {
        var history: [HistoryChange] = []
        let models = context.schema.models
        for number in order.keys.sorted() {
            guard let overlay = rows[number] else { continue }
            let model = models[number]
            for key in order[number] ?? [] {
                guard let row = overlay[key], let original = row.original else {
                    if let row = overlay[key], !row.isDeleted {
                        history.append(
                            HistoryChange(entity: model.name, key: key, kind: .insert, changedProperties: []))
                    }
                    continue
                }
                if row.isDeleted {
                    var tombstone: [String: RecordedValue] = [:]
                    for column in model.preservedColumns where column < original.count {
                        tombstone[context.columnName(column, model)] = RecordedValue(original[column])
                    }
                    history.append(
                        HistoryChange(
                            entity: model.name, key: key, kind: .delete, changedProperties: [], tombstone: tombstone))
                } else if row.values != original {
                    let names = row.values.indices.filter { row.values[$0] != original[$0] }.map {
                        context.columnName($0, model)
                    }
                    history.append(HistoryChange(entity: model.name, key: key, kind: .update, changedProperties: names))
                }
            }
        }
        return history
    }

    /// The history of the batches' plain inserts, one run of keys per entity (reserved together,
    /// so usually stored as one range).
    func historyKeyRuns() -> [HistoryKeyRun] {
        let models = context.schema.models
        return plainInserts.sorted(by: { $0.key < $1.key }).map { number, runs in
            HistoryKeyRun(entity: models[number].name, kind: .insert, keys: runs.flatMap(\.keys))
        }
    }

    /// Whether every conflict names a row only the batches wrote: then the batches can be worked
    /// out again from a fresh snapshot and the save retried.
    func covers(_ conflicts: [VersionConflict]) -> Bool {
        guard !conflicts.isEmpty else { return false }
        let numbers = Dictionary(
            uniqueKeysWithValues: context.schema.models.enumerated().map { ($1.name, $0) })
        return conflicts.allSatisfy { conflict in
            guard conflict.objectID.storeIdentifier == storeIdentifier,
                let key = conflict.objectID.primaryKey, let number = numbers[conflict.objectID.entityName]
            else { return false }
            return rows[number]?[key] != nil || plainInserts[number]?.contains { $0.keys.contains(key) } == true
        }
    }

    /// Brings the context's registered objects to what the batches committed: deleted rows are let
    /// go, updated rows get their new values and version; relationship caches are dropped, since
    /// batches may have added or removed related rows.
    func refresh(_ context: ObjectContext) {
        for (number, overlay) in rows {
            for (key, row) in overlay where !row.isInsert {
                guard let object = context.registry[number][key] else { continue }
                if row.isDeleted {
                    context.evict(object, number: number, key: key)
                    object.state.insert(.deleted)
                } else if row.values != row.original {
                    object.replaceValues(with: row.values)
                    object.version = row.version + 1
                }
            }
        }
        context.dropRelationshipCaches()
    }
}

extension ObjectContext {
    /// Drops every registered object's loaded relationships, to be read again from the store.
    func dropRelationshipCaches() {
        for entity in registry { for object in entity.values { object.sideState?.forgetRelationships() } }
        objects.removeFetchGroups()
    }
}
