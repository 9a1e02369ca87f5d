public import Foundation
import StrataStorage

extension ObjectContext {
    /// Stages a batch insert of values: one row per element of `elements`, filled by `fill`, with
    /// no managed objects built. The rows are written by the next ``save()``, in the same atomic
    /// commit as the context's other changes (all of it or none of it).
    ///
    /// Each row starts with the attributes' declared defaults; `fill` sets what it needs through
    /// the ``BatchRow``. `onConflict` says what a row whose unique value is already taken does
    /// (``UpsertPolicy``): fail (the default), be skipped, or update the existing row. Rows get
    /// permanent IDs at the save; ``savedBatches`` lists them.
    ///
    /// ```swift
    /// try await contexts.performUnitOfWork { context in
    ///     try context.batchInsert(Account.self, from: ["Cash", "Bank"]) { name, row in
    ///         row[\.name] = name
    ///     }
    /// }
    /// ```
    ///
    /// What a batch skips: `awakeFromInsert()` and `validateForSave()` are not called (no object
    /// exists). Unique constraints, value checks (NaN) and history all hold, and the save refuses
    /// with `.validation`, naming the row, a to-one link to a row that no longer exists.
    ///
    /// Lifetime: `fill` runs now, inside this call; the rows are kept until the save or
    /// ``rollback()``.
    /// - Throws: `.misuse` outside `perform`, for an entity the context has unsaved object changes
    ///   for (save or roll them back first), a key path that is not a stored property, a
    ///   relationship target that is not a saved object of the right entity, upsert key paths
    ///   that are not exactly one declared unique constraint, or a row replaced with one kept
    ///   from another batch; `.validation` for a NaN value; whatever `fill` throws (nothing is
    ///   staged then).
    @inlinable
    public func batchInsert<Model: ManagedObject, Elements: Sequence>(
        _ type: Model.Type, from elements: Elements, onConflict policy: UpsertPolicy<Model> = .fail,
        _ fill: (Elements.Element, inout BatchRow<Model>) throws -> Void
    ) throws {
        // Inlined into the caller, so the loop over `elements` and the row's setters are
        // specialized for their types; what is left as calls (starting, finishing a row, ending)
        // is not generic over the row's model.
        var row = BatchRow<Model>(
            try beginBatchInsert(Model.self, onConflict: policy, expectedRows: elements.underestimatedCount))
        let batch = row.staging.batch
        for element in elements {
            try fill(element, &row)
            try row.staging.finishRow(of: batch)
        }
        endBatchInsert(row.staging)
    }

    /// Checks a batch insert's call and upsert policy, and starts its staging: the first part of
    /// ``batchInsert(_:from:onConflict:_:)``.
    @usableFromInline
    func beginBatchInsert<Model: ManagedObject>(
        _ type: Model.Type, onConflict policy: UpsertPolicy<Model>, expectedRows: Int
    ) throws -> BatchInsertStaging {
        try checkInside("ObjectContext.batchInsert(_:from:onConflict:_:)")
        let (model, number) = try batchTarget(Model.self, call: "batchInsert")
        let (clash, uniqueColumns) = try resolve(policy, model: model, number: number)
        return BatchInsertStaging(
            model: model, number: number, clash: clash, uniqueColumns: uniqueColumns, storeIdentifier: storeIdentifier,
            expectedRows: expectedRows)
    }

    /// Stages a batch insert's finished rows for the next save: the last part of
    /// ``batchInsert(_:from:onConflict:_:)``.
    @usableFromInline
    func endBatchInsert(_ staging: BatchInsertStaging) {
        pendingBatches.append(.insert(staging.staged))
    }

    /// Stages a batch update: every row matching `predicate` (every row when nil) gets the
    /// assignments, in the engine, with no managed objects built. Written by the next ``save()``
    /// in the same atomic commit as the context's other changes.
    ///
    /// The rows are selected when the save runs, from the store as it is then. Every changed row's
    /// version goes up, so a context that read one of them gets `.conflict` at its own save.
    ///
    /// ```swift
    /// try context.batchUpdate(Account.self, where: #Predicate { $0.allowsOverdraft }, set: [.add(\.balance, 5)])
    /// try context.save()
    /// ```
    ///
    /// What a batch skips: `validateForSave()` is not called. Unique constraints hold: a batch
    /// that would give two rows one unique value fails with `.constraintViolation`, writing
    /// nothing.
    /// - Throws: `.misuse` outside `perform`, for an entity the context has unsaved object changes
    ///   for, for no assignments, for a key path that is not a stored attribute, or for a predicate
    ///   the engine cannot run (one that calls methods or compares computed values); `.validation`
    ///   for a NaN operand (`.value`, `.add` or `.multiply`). At the save, `.validation` naming the
    ///   row for arithmetic past `Int64` or giving NaN (infinity minus infinity, zero times
    ///   infinity), writing nothing.
    public func batchUpdate<Model: ManagedObject>(
        _ type: Model.Type, where predicate: Predicate<Model>?, set assignments: [BatchAssignment<Model>]
    ) throws {
        try checkInside("ObjectContext.batchUpdate(_:where:set:)")
        let (model, number) = try batchTarget(Model.self, call: "batchUpdate")
        guard !assignments.isEmpty else {
            throw StrataError.misuse("batchUpdate(\(model.name).self, …) was given no assignments; pass at least one")
        }
        let filter = try engineFilter(predicate, call: "batchUpdate")
        var cache = BatchColumnCache(storeIdentifier: storeIdentifier)
        var resolved: [(column: Int, operation: StagedUpdate.Operation)] = []
        for assignment in assignments {
            guard let column = cache.column(assignment.keyPath, model: model, relationship: false) else {
                throw cache.misuse ?? .misuse("batchUpdate: \(assignment.keyPath) is not an attribute of \(model.name)")
            }
            let operation: StagedUpdate.Operation
            let operand: StoredValue
            switch assignment.operation {
            case .value(let value): (operation, operand) = (.value(value), value)
            case .add(let value): (operation, operand) = (.add(value), value)
            case .multiply(let value): (operation, operand) = (.multiply(value), value)
            }
            if case .real(let number) = operand, number.isNaN {
                let what: String
                switch operation {
                case .value: what = "sets NaN, which cannot be stored"
                case .add: what = "adds NaN, whose result (NaN) cannot be stored"
                case .multiply: what = "multiplies by NaN, whose result (NaN) cannot be stored"
                }
                throw StrataError.validation([
                    ValidationIssue(
                        entity: model.name, property: model.properties[model.columnProperties[column]].name,
                        message: "a batch update \(what); nothing was staged. Use a number")
                ])
            }
            resolved.append((column, operation))
        }
        pendingBatches.append(
            .update(StagedUpdate(model: model, number: number, filter: filter, assignments: resolved)))
    }

    /// Stages a batch delete: every row matching `predicate` (every row when nil) is deleted in the
    /// engine with no managed objects built, with the delete rules honoured set-wise: cascade
    /// deletes the related rows, nullify clears their links, and deny refuses the whole save with
    /// `.validation` naming the rows that deny. Written by the next ``save()`` in the same atomic
    /// commit as the context's other changes.
    ///
    /// ```swift
    /// let cutoff = Date(timeIntervalSinceNow: -90 * 86_400)
    /// try context.batchDelete(Transaction.self, where: #Predicate { $0.date < cutoff })
    /// try context.save()
    /// let deleted = context.savedBatches[0].deletedIDs.count
    /// ```
    ///
    /// The rows are selected when the save runs. History records every deleted row, with the
    /// tombstones of `.preserveAfterDeletion` attributes. Objects of this context whose rows the
    /// batch deleted are let go at the save, as if deleted elsewhere and merged.
    /// - Throws: `.misuse` outside `perform`, for an entity the context has unsaved object changes
    ///   for, or for a predicate the engine cannot run.
    public func batchDelete<Model: ManagedObject>(_ type: Model.Type, where predicate: Predicate<Model>?) throws {
        try checkInside("ObjectContext.batchDelete(_:where:)")
        let (model, number) = try batchTarget(Model.self, call: "batchDelete")
        let filter = try engineFilter(predicate, call: "batchDelete")
        pendingBatches.append(.delete(StagedDelete(model: model, number: number, filter: filter)))
    }

    /// The model and entity number of a batch's class, refused while it has unsaved object changes.
    private func batchTarget(_ type: ManagedObject.Type, call: String) throws -> (EntityModel, Int) {
        guard let model = schemaModel(of: type) else { throw notInSchema(type.entityName, type: type) }
        let number = try entityNumber(model)
        if hasWrittenChanges(model) {
            throw StrataError.misuse(
                """
                \(call)(\(model.name).self, …): this context has unsaved changes to \(model.name) objects, and a \
                batch acts on stored rows only. Save (or roll back) those changes first, or do the batch in its own \
                context; nothing was staged
                """)
        }
        return (model, number)
    }

    /// The filter the engine runs for `predicate`, refusing one it cannot run exactly.
    func engineFilter<Model: ManagedObject>(_ predicate: Predicate<Model>?, call: String) throws -> Filter? {
        try engineFilter(of: FetchQuery(FetchRequest<Model>(predicate: predicate), context: self), call: call)
    }

    /// The filter the engine runs for a compiled query's predicate, refusing one it cannot run
    /// exactly.
    func engineFilter(of query: FetchQuery, call: String) throws -> Filter? {
        guard query.isExact else {
            throw StrataError.misuse(
                """
                \(call)(\(query.model.name).self, where: …): the predicate has parts the storage engine cannot \
                evaluate (method calls, computed properties, or comparisons it cannot translate), and a set-based \
                operation never evaluates a predicate in part. Rewrite it with stored attributes, comparisons, \
                contains/hasPrefix and &&, ||, !; or fetch the objects and act on them
                """)
        }
        return query.node?.pureFilter
    }

    /// The clash action and unique columns of an upsert policy, checked against the store schema.
    private func resolve<Model: ManagedObject>(
        _ policy: UpsertPolicy<Model>, model: EntityModel, number: Int
    ) throws -> (StagedInsert.Clash, [Int]) {
        if case .fail = policy.action { return (.fail, []) }
        var matching: [Int] = []
        for keyPath in policy.matching {
            guard let property = model.propertyIndex(forKeyPath: keyPath),
                let column = model.properties[property].column
            else {
                throw StrataError.misuse(
                    "an upsert of \(model.name) matches on \(keyPath), which is not a stored attribute of \(model.name)"
                )
            }
            matching.append(column)
        }
        let unique = schema.storeSchema.entities[number].indexes.filter(\.isUnique)
        guard !matching.isEmpty, unique.contains(where: { Set($0.columns) == Set(matching) }) else {
            let declared = unique.map { "[" + $0.columns.map { columnName($0, model) }.joined(separator: ", ") + "]" }
            throw StrataError.misuse(
                """
                an upsert of \(model.name) must match on exactly the attributes of one declared unique constraint; \
                it matches on [\(matching.map { columnName($0, model) }.joined(separator: ", "))], and \(model.name) \
                declares \(declared.isEmpty ? "none" : declared.joined(separator: " and ")). Declare the \
                constraint (@Attribute(.unique) or EntityIndex.unique) or match on one that exists
                """)
        }
        guard case .update(let setting) = policy.action else { return (.ignore, matching) }
        var columns: [Int] = []
        for keyPath in setting {
            guard let property = model.propertyIndex(forKeyPath: keyPath),
                let column = model.properties[property].column
            else {
                throw StrataError.misuse(
                    "an upsert of \(model.name) sets \(keyPath), which is not a stored property of \(model.name)")
            }
            columns.append(column)
        }
        return (.update(columns: columns), matching)
    }

    func columnName(_ column: Int, _ model: EntityModel) -> String {
        model.properties[model.columnProperties[column]].name
    }
}
