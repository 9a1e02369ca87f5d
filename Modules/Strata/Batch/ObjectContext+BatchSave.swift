import StrataStorage

extension ObjectContext {
    /// Refuses a save whose object changes touch an entity a staged batch reaches (its own, and
    /// for a delete every entity its delete rules change): a batch acts on stored rows only, so the
    /// two would overlap.
    func refuseObjectChangesUnderBatches() throws(StrataError) {
        for batch in pendingBatches {
            for model in reach(of: batch) where hasWrittenChanges(model) {
                throw .misuse(
                    """
                    this save holds unsaved changes to \(model.name) objects and a batch \
                    \(batchVerb(batch)) of \(batch.model.name) that reaches \(model.name) rows; a batch acts on \
                    stored rows only, so the two would overlap. Nothing was written: save the object changes \
                    before staging the batch, or use separate contexts
                    """)
            }
        }
    }

    private func batchVerb(_ batch: StagedBatch) -> String {
        switch batch {
        case .insert: "insert"
        case .update: "update"
        case .delete: "delete"
        }
    }

    /// The entities a batch may write: its own, and for a delete every entity its delete rules
    /// reach (cascaded deletes, cleared links).
    func reach(of batch: StagedBatch) -> [EntityModel] {
        guard case .delete = batch else { return [batch.model] }
        var reached = [batch.model]
        var index = 0
        while index < reached.count {
            let model = reached[index]
            index += 1
            for case let relation? in model.relations where !reached.contains(where: { $0 === relation.target }) {
                if relation.deleteRule == .cascade || relation.isToMany || !relation.inverseIsToMany {
                    reached.append(relation.target)
                }
            }
        }
        return reached
    }

    /// A unique clash of a batch insert, named by the batch row that caused it when one is found
    /// (a value repeated inside the batch, or already stored); the engine's error otherwise.
    func diagnoseBatchClash(entity: String, attributes: [String], native: NativeError?) throws -> StrataError {
        let original = StrataError.constraintViolation(entity: entity, attributes: attributes, native: native)
        guard let model = schema.model(named: entity), let number = schema.number(of: model) else { return original }
        let columns = attributes.compactMap { name in
            model.properties.first { $0.name == name }?.column
        }
        guard columns.count == attributes.count, !columns.isEmpty else { return original }
        defer { endSnapshot() }
        endSnapshot()
        let reader = try snapshot()
        var seen: [[StoredValue]: String] = [:]
        for (batchIndex, batch) in pendingBatches.enumerated() {
            guard case .insert(let insert) = batch, insert.number == number, case .fail = insert.clash else { continue }
            for (rowIndex, values) in insert.rows.enumerated() {
                let tuple = columns.map { values[$0] }
                if tuple.contains(where: \.isNull) { continue }
                let here = "row \(rowIndex) of batch insert \(batchIndex + 1)"
                let shown = zip(attributes, tuple).map { "\($0) = \(RecordedValue($1))" }.joined(separator: ", ")
                if let earlier = seen[tuple] {
                    return clash(original, "\(here) repeats \(shown) of \(earlier)")
                }
                seen[tuple] = here
                let filter = Filter.and(zip(columns, tuple).map { .compare(column: $0, .equal, $1) })
                if let stored = try reader.rows(for: FetchPlan(entity: number, filter: filter, limit: 1)).first {
                    let id = ObjectID(storeIdentifier: storeIdentifier, entityName: entity, primaryKey: stored.key)
                    return clash(original, "\(here) has \(shown), which \(id.uriString) holds already")
                }
            }
        }
        return original
    }

    private func clash(_ original: StrataError, _ detail: String) -> StrataError {
        guard case .constraintViolation(let entity, let attributes, let native) = original else { return original }
        var described = native ?? NativeError(engine: "Strata", code: 0, message: "unique constraint violated")
        described.operation = "a batch insert, nothing written: \(detail)"
        return .constraintViolation(entity: entity, attributes: attributes, native: described)
    }
}
