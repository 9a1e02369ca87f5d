import StrataStorage

/// Set writes (``StrataStorage/ChangeSet/setWrites``), run on the commit's working copy after its
/// row writes: each selects its rows as the earlier ones left them, then updates, deletes or
/// denies them, or upserts its rows.
extension MemoryState {
    /// What a selection found: the keys (ascending) and, for a selection by reference, the deleted
    /// keys the selected rows refer to (ascending); for a filter, the keys again.
    private struct Selected {
        var keys: [Int64] = []
        var holders: [Int64] = []
    }

    /// Runs `writes` in order and returns one result per write.
    /// - Throws: `.validation` from a deny, an integer overflow or NaN; `.constraintViolation`;
    ///   `.conflict` for an upserted key that is taken; `.misuse` for a filter naming a column the
    ///   entity does not have.
    mutating func runSetWrites(_ writes: [SetWrite]) throws(StrataError) -> [SetWriteResult] {
        var results: [SetWriteResult] = []
        for write in writes {
            let entity = try entity(write.entity)
            switch write.action {
            case .upsert(let upsert):
                results.append(try self.upsert(upsert, entity))
            case .update(let assignments):
                let selected = try select(write.selection, entity, earlier: results)
                results.append(try update(selected.keys, assignments, entity))
            case .delete(let columns):
                let selected = try select(write.selection, entity, earlier: results)
                var result = SetWriteResult(keys: selected.keys)
                for key in selected.keys {
                    guard let row = tables[entity.number].remove(key) else { continue }
                    if !columns.isEmpty { result.tombstones.append(columns.map { row.values[$0] }) }
                    removeLinks(ofEntity: entity.number, key: key)
                }
                results.append(result)
            case .deny(let denial):
                let selected = try select(write.selection, entity, earlier: results)
                guard selected.keys.isEmpty else {
                    throw denial.error(
                        holders: selected.holders, relatedCount: selected.keys.count, storeIdentifier: identifier)
                }
                results.append(SetWriteResult())
            }
        }
        return results
    }

    private func select(
        _ selection: SetWrite.Selection, _ entity: EntitySchema, earlier results: [SetWriteResult]
    ) throws(StrataError) -> Selected {
        let table = tables[entity.number]
        switch selection {
        case .matching(let filter):
            var keys: [Int64] = []
            if let filter {
                try MemoryScan.check(filter, entity)
                let evaluator = FilterEvaluator(filter)
                if let candidates = table.candidates(filter) {
                    table.forEach(candidates) { key, row in
                        if evaluator.matches(row.values, key: key) { keys.append(key) }
                    }
                } else {
                    for (key, row) in table.rows where evaluator.matches(row.values, key: key) { keys.append(key) }
                }
            } else {
                keys = table.rows.keys
            }
            keys.sort()
            return Selected(keys: keys, holders: keys)
        case .referencing(let column, let step):
            let deleted = Set(results[step].keys)
            var selected = Selected()
            var holders = Set<Int64>()
            for (key, row) in table.rows {
                guard case .integer(let target) = row.values[column], deleted.contains(target) else { continue }
                selected.keys.append(key)
                holders.insert(target)
            }
            selected.keys.sort()
            selected.holders = holders.sorted()
            return selected
        }
    }

    private mutating func update(
        _ keys: [Int64], _ assignments: [SetWrite.ColumnAssignment], _ entity: EntitySchema
    ) throws(StrataError) -> SetWriteResult {
        var result = SetWriteResult()
        for key in keys {
            guard var row = tables[entity.number].rows[key] else { continue }
            var changed = false
            for item in assignments {
                guard let value = item.assignment.applied(to: row.values[item.column]) else {
                    throw SetWrite.overflow(
                        entityName: entity.name, column: entity.columns[item.column].name, key: key,
                        storeIdentifier: identifier)
                }
                if case .real(let real) = value, real.isNaN {
                    throw SetWrite.notANumber(
                        entityName: entity.name, column: entity.columns[item.column].name, key: key,
                        storeIdentifier: identifier)
                }
                if value != row.values[item.column] {
                    row.values[item.column] = value
                    changed = true
                }
            }
            guard changed else { continue }
            try rewrite(key, row, entity)
            result.keys.append(key)
        }
        return result
    }

    private mutating func upsert(
        _ upsert: SetWrite.Upsert, _ entity: EntitySchema
    ) throws(StrataError)
        -> SetWriteResult
    {
        guard let unique = tables[entity.number].uniques.firstIndex(where: { $0.columns == upsert.uniqueColumns })
        else {
            throw .misuse("entity \(entity.name) has no unique index on columns \(upsert.uniqueColumns)")
        }
        let updated: [Int] = if case .update(let columns) = upsert.onClash { columns } else { [] }
        var result = SetWriteResult()
        for (position, given) in upsert.rows.enumerated() {
            let key = upsert.keys[position]
            let values = try MemoryValues.checked(given, of: entity, key: key)
            guard let owner = owner(of: values, in: unique, entity.number) else {
                if let stored = tables[entity.number].rows[key] {
                    let id = ObjectID(storeIdentifier: identifier, entityName: entity.name, primaryKey: key)
                    throw .conflict([VersionConflict(objectID: id, expectedVersion: 0, storedVersion: stored.version)])
                }
                if let clash = tables[entity.number].clash(values, key: key) {
                    throw MemoryValues.violation(entity, tables[entity.number], clash)
                }
                tables[entity.number].put(key, MemoryRow(version: 1, values: values))
                result.insertedKeys.append(key)
                continue
            }
            guard case .update = upsert.onClash, var row = tables[entity.number].rows[owner] else {
                result.ignoredCount += 1
                continue
            }
            var changed = false
            for column in updated where row.values[column] != values[column] {
                row.values[column] = values[column]
                changed = true
            }
            guard changed else {
                result.ignoredCount += 1
                continue
            }
            try rewrite(owner, row, entity)
            result.keys.append(owner)
        }
        return result
    }

    /// Stores `row` (new values of the stored row `key`) with its version grown by one.
    /// - Throws: `.validation` for NaN, `.constraintViolation` for a unique clash, `.storeFull`
    ///   past the highest version.
    private mutating func rewrite(_ key: Int64, _ row: MemoryRow, _ entity: EntitySchema) throws(StrataError) {
        let values = try MemoryValues.checked(row.values, of: entity, key: key)
        guard row.version < .max else {
            throw .storeFull("\(entity.name) row \(key) has reached the highest version, \(Int64.max)")
        }
        if let clash = tables[entity.number].clash(values, key: key) {
            throw MemoryValues.violation(entity, tables[entity.number], clash)
        }
        tables[entity.number].put(key, MemoryRow(version: row.version + 1, values: values))
    }

    /// The key of the row holding `values`' values in unique index number `unique` of entity
    /// `number`; nil when none does or one of them is null.
    private func owner(of values: ContiguousArray<StoredValue>, in unique: Int, _ number: Int) -> Int64? {
        guard let indexKey = tables[number].uniques[unique].key(of: values) else { return nil }
        return tables[number].uniques[unique].owners[indexKey]
    }
}
