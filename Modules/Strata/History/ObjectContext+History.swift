import StrataStorage
import Synchronization

extension ObjectContext {
    /// The author recorded in the persistent history of this context's saves; the context's
    /// ``name`` when not set. Set it from anywhere, at any time: a save records the value current
    /// when it commits.
    ///
    /// ```swift
    /// let context = container.newBackgroundContext()
    /// context.transactionAuthor = "importer"
    /// try await context.perform { /* … */ try context.save() }
    /// // container.history(after: start, authors: ["importer"]) lists that save
    /// ```
    public var transactionAuthor: String? {
        get { authorName.withLock { $0 } }
        set { authorName.withLock { $0 = newValue } }
    }

    /// Whether this context's saves append persistent history (its container's setting).
    public var recordsHistory: Bool { changeHub != nil }

    /// Notes that `property`, a to-many relationship of `object`, changed (for the history).
    func noteToManyChange(_ object: ManagedObject, property: Int) {
        guard !object.state.contains(.inserted) else { return }
        changedToMany[ObjectIdentifier(object), default: []].insert(property)
    }

    /// The history of the change set just built from the pending changes: one entry per object
    /// it inserts, updates, touches or deletes, in that order.
    func historyRecord() -> HistoryRecord {
        var changes: [HistoryChange] = []
        // Every list counted: one left out (a to-many insert touches its targets) would make the
        // last append copy the whole array into one twice as large (91 MB at 1,000,000 inserts).
        changes.reserveCapacity(inserted.count + updated.count + touched.count + deleted.count)
        for object in inserted where !object.state.contains(.deleted) {
            guard let model = object.model else { continue }
            // An insert changes every property: the reader lists them from the model, so the store
            // does not keep the same names for every inserted object.
            changes.append(HistoryChange(entity: model.name, key: object.key, kind: .insert, changedProperties: []))
        }
        var shared = SharedPropertyNames()
        for object in updated where !object.state.contains(.deleted) && !object.state.contains(.inserted) {
            guard let model = object.model else { continue }
            // A save that changed a to-many relationship lists it too: each object on its own then.
            let names =
                (changedToMany.isEmpty ? shared.names(of: object, model: model) : nil)
                ?? changedPropertyNames(of: object, model: model)
            if names.isEmpty && !object.state.contains(.touched) { continue }
            changes.append(HistoryChange(entity: model.name, key: object.key, kind: .update, changedProperties: names))
        }
        for object in touched
        where !object.state.contains(.deleted) && !object.state.contains(.updated) && !object.state.contains(.inserted)
        {
            guard let model = object.model else { continue }
            changes.append(
                HistoryChange(
                    entity: model.name, key: object.key, kind: .update,
                    changedProperties: changedPropertyNames(of: object, model: model)))
        }
        for object in deleted where object.key > 0 && !object.state.contains(.inserted) {
            guard let model = object.model else { continue }
            var tombstone: [String: RecordedValue] = [:]
            if !model.preservedColumns.isEmpty {
                let values = object.committedValues ?? ContiguousArray(object.values)
                for column in model.preservedColumns where column < values.count {
                    tombstone[model.properties[model.columnProperties[column]].name] = RecordedValue(values[column])
                }
            }
            changes.append(
                HistoryChange(
                    entity: model.name, key: object.key, kind: .delete, changedProperties: [], tombstone: tombstone))
        }
        return HistoryRecord(author: transactionAuthor ?? name, changes: changes)
    }

    /// One array of changed property names for every updated object of a save whose changed
    /// columns are those of the object before it: a save that changes the same attributes of
    /// 10,000 objects builds and sorts one array, not 10,000 (and its history is written as
    /// one run of keys, ``HistoryJSON``).
    private struct SharedPropertyNames {
        private var model: ObjectIdentifier?
        private var changedColumns: UInt64 = 0
        private var names: [String] = []

        /// The names of `object`'s changed attributes and to-one relationships, shared with the
        /// objects before it that changed the same columns; nil when it has no committed values or
        /// more than 64 columns (``changedPropertyNames(of:model:)`` tells then). The caller
        /// adds no to-many names: it uses this only when no to-many relationship changed.
        mutating func names(of object: ManagedObject, model: EntityModel) -> [String]? {
            guard let committed = object.committedValues, !object.state.contains(.touched) else { return nil }
            let values = object.values
            let count = min(committed.count, values.count)
            guard count <= 64 else { return nil }
            var changed: UInt64 = 0
            for column in 0..<count where committed[column] != values[column] { changed |= 1 << UInt64(column) }
            let entity = ObjectIdentifier(model)
            if self.model == entity && changedColumns == changed { return names }
            var names: [String] = []
            for column in 0..<count where changed & (1 << UInt64(column)) != 0 {
                names.append(model.properties[model.columnProperties[column]].name)
            }
            names.sort()
            (self.model, changedColumns, self.names) = (entity, changed, names)
            return names
        }
    }

    /// The attributes and to-one relationships whose columns differ from the committed values,
    /// then the to-many relationships changed, sorted by name.
    private func changedPropertyNames(of object: ManagedObject, model: EntityModel) -> [String] {
        var names: [String] = []
        if let committed = object.committedValues {
            let values = object.values
            for column in 0..<min(committed.count, values.count) where committed[column] != values[column] {
                names.append(model.properties[model.columnProperties[column]].name)
            }
        }
        if let toMany = changedToMany[ObjectIdentifier(object)] {
            for property in toMany { names.append(model.properties[property].name) }
        }
        return names.sorted()
    }
}
