extension ChangeSet {
    /// The history entries of set writes' results: an update per updated key listing the
    /// assigned columns' names, a delete per deleted key with its tombstone (null values left
    /// out). Engines append them after ``history``'s own changes.
    public static func historyChanges(
        of setWrites: [SetWrite], results: [SetWriteResult], schema: StoreSchema
    ) -> [HistoryChange] {
        var changes: [HistoryChange] = []
        for (write, result) in zip(setWrites, results) {
            guard write.entity < schema.entities.count else { continue }
            let entity = schema.entities[write.entity]
            switch write.action {
            case .update(let assignments):
                let names = assignments.map { entity.columns[$0.column].name }
                for key in result.keys {
                    changes.append(
                        HistoryChange(entity: entity.name, key: key, kind: .update, changedProperties: names))
                }
            case .delete(let columns):
                for (index, key) in result.keys.enumerated() {
                    var tombstone: [String: RecordedValue] = [:]
                    if index < result.tombstones.count {
                        for (column, value) in zip(columns, result.tombstones[index]) where !value.isNull {
                            tombstone[entity.columns[column].name] = RecordedValue(value)
                        }
                    }
                    changes.append(
                        HistoryChange(
                            entity: entity.name, key: key, kind: .delete, changedProperties: [], tombstone: tombstone))
                }
            case .upsert(let upsert):
                for key in result.insertedKeys {
                    changes.append(HistoryChange(entity: entity.name, key: key, kind: .insert, changedProperties: []))
                }
                if case .update(let columns) = upsert.onClash {
                    let names = columns.map { entity.columns[$0].name }
                    for key in result.keys {
                        changes.append(
                            HistoryChange(entity: entity.name, key: key, kind: .update, changedProperties: names))
                    }
                }
            case .deny:
                continue
            }
        }
        return changes
    }

    /// The history an engine that keeps history appends for a change set whose set writes gave
    /// `results`: ``history`` with the set writes' changes added, when the change set writes data
    /// or its set writes changed any row; nil otherwise.
    public func historyToAppend(adding results: [SetWriteResult], schema: StoreSchema) -> HistoryRecord? {
        guard var record = history else { return nil }
        var added: [HistoryChange] = []
        var runs: [HistoryKeyRun] = []
        for (write, result) in zip(setWrites, results) where write.entity < schema.entities.count {
            let entity = schema.entities[write.entity]
            // Keys that share their change go as runs: one value per set write, not one per row.
            switch write.action {
            case .update(let assignments) where !result.keys.isEmpty:
                let names = assignments.map { entity.columns[$0.column].name }
                runs.append(
                    HistoryKeyRun(entity: entity.name, kind: .update, changedProperties: names, keys: result.keys))
            case .upsert(let upsert):
                if !result.insertedKeys.isEmpty {
                    runs.append(HistoryKeyRun(entity: entity.name, kind: .insert, keys: result.insertedKeys))
                }
                if case .update(let columns) = upsert.onClash, !result.keys.isEmpty {
                    let names = columns.map { entity.columns[$0].name }
                    runs.append(
                        HistoryKeyRun(entity: entity.name, kind: .update, changedProperties: names, keys: result.keys))
                }
            case .delete(let columns) where columns.isEmpty && !result.keys.isEmpty:
                runs.append(HistoryKeyRun(entity: entity.name, kind: .delete, keys: result.keys))
            default:
                added += Self.historyChanges(of: [write], results: [result], schema: schema)
            }
        }
        guard writesData || !added.isEmpty || !runs.isEmpty else { return nil }
        record.changes += added
        record.keyRuns += runs
        return record
    }

    /// Checks that set writes fit a schema: known entities and columns, assignments of the column's
    /// storage class, and `deletedBy` naming an earlier delete.
    /// - Throws: `.misuse` naming the first set write that does not fit.
    public func checkSetWrites(against schema: StoreSchema) throws(StrataError) {
        for (index, write) in setWrites.enumerated() {
            guard write.entity >= 0, write.entity < schema.entities.count else {
                throw .misuse("set write \(index) names entity \(write.entity), which the store schema does not have")
            }
            let columns = schema.entities[write.entity].columns
            if case .referencing(let column, let step) = write.selection {
                guard column >= 0, column < columns.count, columns[column].type == .reference else {
                    throw .misuse("set write \(index) selects by column \(column), which is not a reference column")
                }
                guard step >= 0, step < index, case .delete = setWrites[step].action else {
                    throw .misuse(
                        "set write \(index) selects rows deleted by set write \(step), which is not an earlier delete")
                }
            }
            switch write.action {
            case .update(let assignments):
                for item in assignments {
                    guard item.column >= 0, item.column < columns.count else {
                        throw .misuse(
                            "set write \(index) assigns column \(item.column), which "
                                + "entity \(write.entity) does not have"
                        )
                    }
                    let storage = columns[item.column].type.storageClass
                    let value: StoredValue
                    switch item.assignment {
                    case .value(let constant):
                        guard constant.isNull ? columns[item.column].isOptional : storage.admits(constant) else {
                            throw .misuse(
                                "set write \(index) gives column \(columns[item.column].name) a value it cannot hold")
                        }
                        continue
                    case .add(let operand), .multiply(let operand): value = operand
                    }
                    guard !value.isNull, storage.admits(value), storage == .integer || storage == .real else {
                        throw .misuse(
                            "set write \(index) does arithmetic on "
                                + "\(columns[item.column].name) with a value of another type"
                        )
                    }
                }
            case .delete(let tombstoneColumns):
                guard tombstoneColumns.allSatisfy({ $0 >= 0 && $0 < columns.count }) else {
                    throw .misuse("set write \(index) asks for a tombstone column entity \(write.entity) does not have")
                }
            case .upsert(let upsert):
                let unique = schema.entities[write.entity].indexes.contains {
                    $0.isUnique && $0.columns == upsert.uniqueColumns
                }
                guard unique, upsert.rows.count == upsert.keys.count,
                    upsert.rows.allSatisfy({ $0.count == columns.count })
                else {
                    throw .misuse(
                        "set write \(index) is an upsert whose unique columns are no "
                            + "unique index, or whose rows and keys do not match"
                    )
                }
                if case .update(let updated) = upsert.onClash,
                    !updated.allSatisfy({ $0 >= 0 && $0 < columns.count })
                {
                    throw .misuse("set write \(index) updates a column entity \(write.entity) does not have")
                }
            case .deny:
                continue
            }
        }
    }
}

extension ChangeSet {
    /// Throws `.misuse` when the change set has set writes: for ``StorageEngine/commit(_:)`` on an
    /// engine (or an engine's mode, such as a migration stage's) that does not run them.
    public func refuseSetWrites(_ where: String) throws(StrataError) {
        guard setWrites.isEmpty else {
            throw .misuse(
                """
                \(`where`) does not run set writes (ChangeSet.setWrites); nothing was written. Send them \
                only to an engine whose acceptsSetWrites is true, through commitReturningResults(_:)
                """)
        }
    }
}
