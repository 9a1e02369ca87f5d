import StrataStorage

extension ObjectContext {
    /// The objects `save()` validates: inserted, then updated, without those marked for deletion.
    ///
    /// Taken before the `validateForSave()` overrides run, so that what they do to the context
    /// does not change which objects they are called on, and again after them for the checks
    /// of values.
    struct PendingObjects {
        let inserted: [ManagedObject]
        let updated: [ManagedObject]

        init(_ context: ObjectContext) {
            if context.deleted.isEmpty {
                // Nothing is marked for deletion: the lists themselves, shared, not copied.
                inserted = context.inserted
                updated = context.updated
            } else {
                inserted = context.inserted.filter { !$0.state.contains(.deleted) }
                updated = context.updated.filter { !$0.state.contains(.deleted) }
            }
        }

        func forEach(_ body: (ManagedObject) throws -> Void) rethrows {
            for object in inserted { try body(object) }
            for object in updated { try body(object) }
        }
    }

    /// Where `save()` is in running the `validateForSave()` overrides.
    enum ValidationPhase {
        case idle
        case running
        /// An override called `rollback()` or `reset()`: the save must not go on.
        case discarded(String)
    }

    /// Checks inserted and updated objects before anything is written: each object's
    /// `validateForSave()`, then, over the objects as the overrides left them (an override may
    /// change values or insert objects), NaN values and uniqueness among unsaved objects.
    /// - Throws: what an override throws; `.misuse` when an override saved, or called
    ///   `rollback()` or `reset()`; `.validation` for a NaN or an undecodable value;
    ///   `.constraintViolation` for a unique value two unsaved objects share.
    func validatePendingObjects() throws {
        validation = .running
        defer { validation = .idle }
        try PendingObjects(self).forEach { try $0.validateForSave() }
        if case .discarded(let call) = validation {
            throw StrataError.misuse(
                """
                validateForSave() called \(call) during save(); nothing was written. Throw from validateForSave() \
                to refuse the save, and call \(call) after save() returns
                """)
        }
        let pending = PendingObjects(self)
        var issues: [ValidationIssue] = []
        pending.forEach { object in
            guard let model = object.model else { return }
            let values = object.values
            for column in values.indices {
                guard case .real(let value) = values[column], value.isNaN else { continue }
                let property = model.properties[model.columnProperties[column]]
                issues.append(
                    ValidationIssue(
                        entity: model.name, property: property.name,
                        message: "NaN cannot be stored; use nil or a number"))
            }
            if !model.checkedColumns.isEmpty { issues += model.undecodableIssues { values[$0] } }
        }
        if !issues.isEmpty { throw StrataError.validation(issues) }
        try checkUniquenessAmongPending(pending)
    }

    /// Two unsaved objects may not share values under a unique index (the engine checks the store).
    private func checkUniquenessAmongPending(_ pending: PendingObjects) throws {
        let entities = schema.storeSchema.entities
        let checked = entities.map { $0.indexes.contains(where: \.isUnique) }
        guard checked.contains(true) else { return }
        var groups = [[ManagedObject]](repeating: [], count: entities.count)
        var numbers = EntityNumberCache(self)
        try pending.forEach { object in
            let number = try numbers.number(of: object)
            if checked[number] { groups[number].append(object) }
        }
        for (number, group) in groups.enumerated() where group.count > 1 {
            let entity = entities[number]
            for index in entity.indexes where index.isUnique {
                let isRepeated =
                    index.columns.count == 1
                    ? Self.repeatsValue(ofColumn: index.columns[0], in: group)
                    : Self.repeatsValues(ofColumns: index.columns, in: group)
                if isRepeated {
                    throw StrataError.constraintViolation(
                        entity: group[0].model!.name, attributes: index.columns.map { entity.columns[$0].name })
                }
            }
        }
    }

    /// Whether two of `objects` hold the same non-null value in `column`: a one-column unique
    /// index, checked with a set of single values (no array per object).
    private static func repeatsValue(ofColumn column: Int, in objects: [ManagedObject]) -> Bool {
        // Reserved for the values there are, not the objects: an optional unique attribute may
        // be nil in most of them.
        var present = 0
        for object in objects where !object.values[column].isNull { present += 1 }
        guard present > 1 else { return false }
        var seen = FirstOccurrences(expecting: present)
        for (position, object) in objects.enumerated() {
            let value = object.values[column]
            if value.isNull { continue }
            if seen.recordFirst(value, at: position) != nil { return true }
        }
        return false
    }

    /// Whether two of `objects` hold the same values in `columns`, none of them null: a unique
    /// index over several columns.
    private static func repeatsValues(ofColumns columns: [Int], in objects: [ManagedObject]) -> Bool {
        var seen = Set<[StoredValue]>()
        for object in objects {
            let values = columns.map { object.values[$0] }
            if values.contains(where: \.isNull) { continue }
            if !seen.insert(values).inserted { return true }
        }
        return false
    }

    /// Gives every inserted object without a key (and not marked for deletion) a permanent key,
    /// entity by entity in entity-number order, and registers it under that key.
    func assignKeysToInserted() throws {
        var counts = [Int](repeating: 0, count: registry.count)
        var numbers = EntityNumberCache(self)
        for object in inserted where object.key == 0 && !object.state.contains(.deleted) {
            counts[try numbers.number(of: object)] += 1
        }
        for (number, count) in counts.enumerated() where count > 0 {
            let keys = try allocateKeys(entity: number, count: count)
            try Self.checkAllocated(keys, count: count, entity: schema.entityNames[number])
            registry[number].reserveCapacity(registry[number].count + count)
            var next = keys.lowerBound
            for object in inserted
            where try object.key == 0 && !object.state.contains(.deleted) && numbers.number(of: object) == number {
                guard next < keys.upperBound else { break }
                object.key = next
                registry[number][next] = object
                next += 1
            }
        }
    }

    /// Throws unless an engine's key reservation holds exactly `count` positive keys: a short
    /// range would leave objects without a key, a non-positive one would give them keys no row
    /// may have.
    static func checkAllocated(_ keys: Range<Int64>, count: Int, entity: String) throws(StrataError) {
        guard keys.lowerBound > 0, keys.count == count else {
            throw .misuse(
                """
                the engine returned keys \(keys) for \(count) new \(entity) object(s); \
                StorageEngine.allocateKeys(entity:count:) must return exactly count positive keys. Nothing was \
                written; this is a defect of the engine.
                """
            )
        }
    }
}
