import StrataStorage

extension ObjectContext {
    /// Writes every unsaved change in one atomic commit.
    ///
    /// In order: delete rules are applied (cascade, nullify, deny), every inserted and updated
    /// object is validated (NaN values, uniqueness among unsaved objects,
    /// ``ManagedObject/validateForSave()``), unsaved objects get permanent IDs, and one change
    /// set — every row carrying the version it was read at — goes to the engine, which commits
    /// all of it or nothing.
    ///
    /// Batches staged with ``batchInsert(_:from:onConflict:_:)``, ``batchUpdate(_:where:set:)`` and
    /// ``batchDelete(_:where:)`` are worked out now, against a fresh snapshot, and written in the
    /// same commit, after the object changes; ``savedBatches`` then says what they did.
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
    /// Cancellation: a save that starts after the task calling ``perform(_:)`` was cancelled
    /// throws `CancellationError` and writes nothing (the context keeps its changes); a save
    /// already under way completes.
    ///
    /// Rows passed to ``requireUnchanged(_:)`` are checked in the same commit: if one of them
    /// changed since this context read it, the save throws `.conflict` and writes nothing. So are
    /// fetch results guarded with ``requireUnchangedResults(of:)``: a row that appeared in,
    /// vanished from or changed in a guarded result set is a conflict too. History cursors staged
    /// with ``moveHistoryCursor(past:)`` move in the same commit, or not at all.
    ///
    /// - Throws: ``StrataStorage/StrataError/validation(_:)``,
    ///   ``StrataStorage/StrataError/constraintViolation(entity:attributes:native:)``,
    ///   ``StrataStorage/StrataError/conflict(_:)`` when another context saved the same rows (or a row required
    ///   unchanged, or a row of a guarded result set) first (nothing is written), errors thrown by
    ///   `validateForSave()`, `.misuse` outside `perform`, inside a ``forEachBatch(of:size:_:)``
    ///   body or a `validateForSave()` (or after one called `rollback()` or `reset()`), after an
    ///   insert of a class the schema does not list, after a change to an object whose deletion
    ///   this context already saved, or after a change to (or a relationship to) an object that
    ///   `rollback()` or `reset()` made invalid, `CancellationError` after cancellation, engine
    ///   errors (`.busy`, `.storeFull`, `.io`, `.storeCorrupt`), and the error of a relationship
    ///   that could not be loaded since the last ``rollback()`` or ``reset()`` (its read answered
    ///   empty, so changes may rest on it).
    public func save() throws {
        try checkInside("ObjectContext.save()")
        try checkCancellation()
        try throwFailedLoad()
        if let streamingEntity {
            throw StrataError.misuse(
                """
                save() was called inside forEachBatch(of:size:_:) over \(streamingEntity); nothing was written. The \
                batches read one snapshot, which a save would end with part of the work committed. Save once after \
                forEachBatch returns (the objects changed in its batches stay in the context), or read pages with \
                fetchLimit and fetchOffset and save each page in a perform of its own
                """)
        }
        guard case .idle = validation else {
            throw StrataError.misuse(
                """
                save() was called from validateForSave(), which save() runs; nothing was written. Throw from \
                validateForSave() to refuse the save; make the changes there and the outer save() writes them
                """)
        }
        if let refused = refusedInserts.first { throw refused }
        try refuseChangesToDeletedObjects()
        guard
            !inserted.isEmpty || !updated.isEmpty || !deleted.isEmpty || !touched.isEmpty || !pendingLinks.isEmpty
                || !unchangedRequirements.isEmpty || !resultGuards.isEmpty || !pendingCursorMoves.isEmpty
                || !pendingBatches.isEmpty
        else {
            // A save with nothing to write succeeds, with no batches to report.
            lastBatchResults = []
            return
        }
        try refuseObjectChangesUnderBatches()
        try applyDeleteRules()
        try validatePendingObjects()
        try assignKeysToInserted()
        let direct = try BatchSetWrites(pendingBatches, context: self)
        let expanded = direct.expandedBatches(pendingBatches)
        var expansion = try expandBatches(expanded)
        var changes = try buildChangeSet(adding: expansion, direct)
        // Delete rules and validation read relationships; one that failed to load read as empty.
        try throwFailedLoad()
        endSnapshot()
        var merges = 0
        var batchRetries = 0
        var setResults: [SetWriteResult] = []
        var commitDuration: Duration?
        while !changes.isEmpty {
            do {
                commitDuration = try timedCommit {
                    if direct.isEmpty {
                        try engine.commit(changes)
                    } else if let engine = engine as? any SetWritingEngine {
                        setResults = try engine.commitReturningResults(changes)
                    }
                }
                break
            } catch StrataError.conflict(let conflicts)
                where batchRetries < 8 && expansion.map({ $0.covers(conflicts) }) == true
            {
                // Rows only the batches wrote changed between their snapshot and the commit: the
                // batches are worked out again from a fresh one.
                batchRetries += 1
                expansion = try expandBatches(expanded)
                changes = try buildChangeSet(adding: expansion, direct)
                endSnapshot()
            } catch StrataError.conflict(let conflicts) where policy != .error && merges < 16 {
                merges += 1
                try merge(conflicts)
                expansion = try expandBatches(expanded)
                changes = try buildChangeSet(adding: expansion, direct)
                endSnapshot()
            } catch StrataError.constraintViolation(let entity, let attributes, let native)
                where expansion?.hasPlainInserts == true
            {
                throw try diagnoseBatchClash(entity: entity, attributes: attributes, native: native)
            }
        }
        didCommit()
        lastBatchResults = batchResults(direct, setResults, expansion)
        expansion?.refresh(self)
        if !direct.isEmpty { try direct.refresh(self, results: setResults) }
        changeHub?.didCommit()
        if let instrumentation, let commitDuration {
            reportCommit(changes, duration: commitDuration, retriedCommits: merges + batchRetries, to: instrumentation)
        }
    }

    /// The results of every staged batch, in order: the engine's for those it ran, the core's
    /// for those it worked out.
    private func batchResults(
        _ direct: BatchSetWrites, _ setResults: [SetWriteResult], _ expansion: BatchExpansion?
    ) -> [BatchResult] {
        var worked = (expansion?.results ?? [])[...]
        var results: [BatchResult] = []
        for role in direct.roles {
            if let role {
                guard setResults.count == direct.setWrites.count else { continue }
                results.append(direct.result(role, setResults, storeIdentifier: storeIdentifier, schema: schema))
            } else if let next = worked.popFirst() {
                results.append(next)
            }
        }
        return results
    }

    /// The staged batches the core works out, against a fresh snapshot; nil when there are none.
    private func expandBatches(_ batches: [StagedBatch]) throws -> BatchExpansion? {
        guard !batches.isEmpty else { return nil }
        endSnapshot()
        var expansion = BatchExpansion(context: self, reader: try snapshot())
        try expansion.run(batches)
        return expansion
    }

    /// The change set of the context's objects plus the batches' rows and set writes, with the
    /// history of both (the engine adds the set writes' own).
    private func buildChangeSet(adding expansion: BatchExpansion?, _ direct: BatchSetWrites) throws -> ChangeSet {
        var changes = try buildChangeSet()
        expansion?.addWrites(to: &changes)
        changes.setWrites = direct.setWrites
        if changeHub != nil {
            var record = historyRecord()
            if let expansion {
                record.changes += expansion.historyChanges()
                record.keyRuns += expansion.historyKeyRuns()
            }
            changes.history = record
        }
        return changes
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
                            issues.append(
                                ValidationIssue(
                                    entity: model.name, property: property,
                                    message:
                                        """
                                        cannot delete while \(members.count) related \(relation.target.name) \
                                        object(s) exist (deny rule)
                                        """
                                ))
                        }
                    case .cascade:
                        for member in members { delete(member) }
                    case .nullify:
                        for member in members { object.toManyRemove(relation.property, member) }
                    }
                } else if let target = object.toOneTarget(relation.property), !target.state.contains(.deleted) {
                    switch relation.deleteRule {
                    case .deny:
                        issues.append(
                            ValidationIssue(
                                entity: model.name, property: property,
                                message: "cannot delete while it refers to a \(relation.target.name) (deny rule)"))
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

    /// Resolves foreign keys of changed relationships now that every target has a key.
    private func syncForeignKeys() {
        for object in relationDirty where !object.state.contains(.gone) {
            guard let model = object.model, let sideState = object.sideState else { continue }
            sideState.forEachToOne { property, target in
                let column = model.column(ofProperty: property)
                guard column >= 0 else { return }
                let value: StoredValue
                if let target, target.key > 0, !target.state.contains(.deleted) {
                    value = .integer(target.key)
                } else {
                    value = .null
                }
                if object.values[column] != value { object.setColumn(column, value) }
            }
        }
    }

    private func buildChangeSet() throws -> ChangeSet {
        syncForeignKeys()
        var numbers = EntityNumberCache(self)
        var changes = ChangeSet()
        changes.inserts.reserveCapacity(inserted.count)
        for object in inserted where !object.state.contains(.deleted) {
            changes.inserts.append(
                RowWrite(
                    entity: try numbers.number(of: object), key: object.key, expectedVersion: 0,
                    values: ContiguousArray(object.values)))
        }
        for object in updated where !object.state.contains(.deleted) && !object.state.contains(.inserted) {
            if object.hasUnchangedValues && !object.state.contains(.touched) { continue }
            changes.updates.append(
                RowWrite(
                    entity: try numbers.number(of: object), key: object.key, expectedVersion: object.version,
                    values: ContiguousArray(object.values)))
        }
        for object in touched
        where !object.state.contains(.deleted) && !object.state.contains(.updated) && !object.state.contains(.inserted)
        {
            changes.touches.append(
                RowVersionCheck(
                    entity: try numbers.number(of: object), key: object.key, expectedVersion: object.version))
        }
        for object in deleted where object.key > 0 && !object.state.contains(.inserted) {
            changes.deletes.append(
                RowVersionCheck(
                    entity: try numbers.number(of: object), key: object.key, expectedVersion: object.version))
        }
        for change in pendingLinks.values {
            guard !change.left.state.contains(.deleted), !change.right.state.contains(.deleted) else { continue }
            let link = JoinLink(join: change.join, leftKey: change.left.key, rightKey: change.right.key)
            if change.isLink { changes.links.append(link) } else { changes.unlinks.append(link) }
        }
        try appendVerifies(to: &changes, numbers: &numbers)
        changes.resultGuards = resultGuards
        changes.cursorMoves = pendingCursorMoves
        return changes
    }

    /// Brings every object's bookkeeping to the committed state.
    private func didCommit() {
        committedSaves += 1
        for object in inserted where !object.state.contains(.deleted) {
            object.version = 1
        }
        for object in updated where !object.state.contains(.deleted) && !object.state.contains(.inserted) {
            if !object.hasUnchangedValues || object.state.contains(.touched) { object.version += 1 }
        }
        for object in touched
        where !object.state.contains(.deleted) && !object.state.contains(.updated) && !object.state.contains(.inserted)
        {
            object.version += 1
        }
        forgetTemporaries()
        for object in deleted {
            if object.key > 0, let number = schema.number(of: object.model!) { registry[number][object.key] = nil }
            object.state.insert(.gone)
        }
        for list in [inserted, updated, touched, relationDirty] {
            for object in list {
                object.committedValues = nil
                object.state.remove([.inserted, .updated, .touched, .relationDirty])
            }
        }
        clearChangeTracking()
    }

    /// Drops the temporary-ID entries of every inserted object (saved or discarded) and of
    /// deleted objects.
    private func forgetTemporaries() {
        // Every inserted object has exactly one entry, and only inserted objects have one: when
        // the counts match, the whole map goes.
        if temporaries.count == inserted.count {
            temporaries = [:]
            return
        }
        for object in inserted where !object.state.contains(.deleted) { temporaries[object.temporarySerial] = nil }
        for object in deleted { temporaries[object.temporarySerial] = nil }
    }

    /// Refuses a save that holds a change to an object whose deletion this context already
    /// saved: the row is gone, so the change could never be written (it used to be dropped
    /// without a word). Refuses as well a change to, or a relationship to, an object that
    /// `rollback()` (an undone insert) or `reset()` made invalid.
    private func refuseChangesToDeletedObjects() throws(StrataError) {
        let ghost =
            updated.first { $0.state.isSuperset(of: [.deleted, .gone]) }
            ?? touched.first { $0.state.isSuperset(of: [.deleted, .gone]) }
            ?? relationDirty.first { $0.state.isSuperset(of: [.deleted, .gone]) }
        if let ghost {
            throw .misuse(
                """
                \(ghost) was changed after this context saved its deletion: it no longer exists, so the change \
                cannot be saved. Nothing was written; insert a new object instead, and call rollback() (or use a \
                fresh context) to drop the change
                """)
        }
        // Only a context where rollback() or reset() let go of objects can hold changes to them.
        guard hasForgottenObjects else { return }
        let forgotten =
            updated.first { $0.state.contains(.gone) } ?? touched.first { $0.state.contains(.gone) }
            ?? relationDirty.first { $0.state.contains(.gone) }
            ?? deleted.first { $0.state.contains(.gone) && $0.key == 0 }
            ?? inserted.first(where: Self.refersToForgotten) ?? relationDirty.first(where: Self.refersToForgotten)
        guard let forgotten else { return }
        throw .misuse(
            """
            \(forgotten) was changed, deleted or related after rollback() or reset() made it (or the object it \
            refers to) invalid: rollback() undoes an insert, and reset() forgets every object. Nothing was \
            written; fetch the object again (or insert a new one) after rollback() or reset(), and call \
            rollback() to drop this change
            """)
    }

    /// Whether an unsaved object's to-one relationship holds an object that `rollback()` or
    /// `reset()` made invalid.
    private static func refersToForgotten(_ object: ManagedObject) -> Bool {
        var found = false
        object.sideState?.forEachToOne { _, target in
            if let target, target.state.contains(.gone), !target.state.contains(.deleted) { found = true }
        }
        return found
    }
}

/// Entity numbers of a run of objects, remembering the last model seen: a bulk insert is
/// mostly runs of one entity, so most lookups are one pointer comparison.
struct EntityNumberCache {
    private let context: ObjectContext
    private var lastModel: ObjectIdentifier?
    private var lastNumber = 0

    init(_ context: ObjectContext) {
        self.context = context
    }

    mutating func number(of object: ManagedObject) throws(StrataError) -> Int {
        let model = object.model!
        if ObjectIdentifier(model) == lastModel { return lastNumber }
        lastNumber = try context.entityNumber(model)
        lastModel = ObjectIdentifier(model)
        return lastNumber
    }
}
