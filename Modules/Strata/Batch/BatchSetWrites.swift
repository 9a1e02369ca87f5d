import Foundation
import StrataStorage

/// The staged batches a save hands to the engine as set writes (``StrataStorage/SetWrite``), to run
/// inside the commit's own transaction, and the results it turns them into.
///
/// A batch goes to the engine when the engine runs set writes and the batch can be said in them:
/// an update; an upsert (`.ignore` or `.update`); a delete whose delete rules are cascades and
/// nullifies along foreign keys the related rows hold, and denies of such rows, with no cycle.
/// (An update that assigns one attribute twice, which applies the assignments in turn, stays with
/// the core.) And when no other batch of the save reaches an entity it reaches, so that the batches that the
/// core works out (``BatchExpansion``, against a snapshot) never need to see its effects. Every
/// other batch is worked out by the core, as before; both kinds commit in one change set.
struct BatchSetWrites {
    /// How one engine-run batch maps onto set writes and back onto a ``BatchResult``.
    enum Role {
        case update(model: EntityModel, step: Int)
        case upsert(model: EntityModel, step: Int, repeatsIgnored: Int)
        /// The delete steps (the first is the batch's own selection) and the nullifying updates.
        case delete(model: EntityModel, deletes: [(number: Int, step: Int)], clears: [(number: Int, step: Int)])
    }

    var setWrites: [SetWrite] = []
    /// Per staged batch: its role when the engine runs it, nil when the core works it out.
    var roles: [Role?] = []

    var isEmpty: Bool { setWrites.isEmpty }

    /// The batches the core still works out itself, in order.
    func expandedBatches(_ batches: [StagedBatch]) -> [StagedBatch] {
        zip(batches, roles).compactMap { $1 == nil ? $0 : nil }
    }

    /// Splits `batches` between the engine and the core.
    init(_ batches: [StagedBatch], context: ObjectContext) throws {
        roles = Array(repeating: nil, count: batches.count)
        guard let engine = context.engine as? any SetWritingEngine, engine.acceptsSetWrites else { return }
        let reaches = batches.map { Set(context.reach(of: $0).map(ObjectIdentifier.init)) }
        for (index, batch) in batches.enumerated() {
            let overlaps = reaches.indices.contains { $0 != index && !reaches[$0].isDisjoint(with: reaches[index]) }
            if overlaps { continue }
            switch batch {
            case .update(let update):
                // One assignment per column (several on one column apply in turn: the core's).
                guard Set(update.assignments.map(\.column)).count == update.assignments.count,
                    Self.arithmeticFits(update, context: context)
                else { continue }
                roles[index] = .update(model: update.model, step: setWrites.count)
                let assignments = Dictionary(
                    update.assignments.map { ($0.column, $0.operation) }, uniquingKeysWith: { $1 })
                setWrites.append(
                    SetWrite(
                        entity: update.number, selection: .matching(update.filter),
                        action: .update(
                            assignments.keys.sorted().map { column in
                                switch assignments[column]! {
                                case .value(let value): SetWrite.ColumnAssignment(column: column, .value(value))
                                case .add(let value): SetWrite.ColumnAssignment(column: column, .add(value))
                                case .multiply(let value): SetWrite.ColumnAssignment(column: column, .multiply(value))
                                }
                            })))
            case .insert(let insert):
                guard let role = try upsert(insert, context: context, engine: engine) else { continue }
                roles[index] = role
            case .delete(let delete):
                guard let role = deleteSteps(delete, context: context) else { continue }
                roles[index] = role
            }
        }
    }

    /// Whether every `.add` and `.multiply` of an update has a number of its column's type; when
    /// not, the core works the batch out and refuses it with its own `.misuse`, which names the
    /// attribute. Also false for real arithmetic that can give NaN from a stored value (adding an
    /// infinity, multiplying by zero or an infinity): the core refuses that row with
    /// ``StrataStorage/SetWrite/notANumber(entityName:column:key:storeIdentifier:)``, the same on
    /// every engine (SQLite would store NULL for NaN, PostgreSQL would store NaN).
    private static func arithmeticFits(_ update: StagedUpdate, context: ObjectContext) -> Bool {
        let columns = context.schema.storeSchema.entities[update.number].columns
        return update.assignments.allSatisfy { item in
            let storage = columns[item.column].type.storageClass
            switch item.operation {
            case .value: return true
            case .add(let operand):
                return (storage == .integer || storage == .real) && !operand.isNull && storage.admits(operand)
                    && !(storage == .real && operand.mayGiveNaN(multiplying: false))
            case .multiply(let operand):
                return (storage == .integer || storage == .real) && !operand.isNull && storage.admits(operand)
                    && !(storage == .real && operand.mayGiveNaN(multiplying: true))
            }
        }
    }

    // MARK: Upsert

    /// An upsert's set write: the batch's rows with repeats of a unique value folded into their
    /// first row (later rows' `setting` values win, as if applied in turn), and fresh keys.
    private mutating func upsert(
        _ insert: StagedInsert, context: ObjectContext, engine: any StorageEngine
    ) throws -> Role? {
        let onClash: SetWrite.Upsert.OnClash
        switch insert.clash {
        case .fail: return nil
        case .ignore: onClash = .ignore
        case .update(let columns): onClash = .update(columns: Array(Set(columns)).sorted())
        }
        let indexes = context.schema.storeSchema.entities[insert.number].indexes
        guard let index = indexes.first(where: { $0.isUnique && Set($0.columns) == Set(insert.uniqueColumns) }) else {
            return nil
        }
        var expansion = BatchExpansion(context: context, reader: try context.snapshot())
        try expansion.checkLinks(of: insert)
        var rows: [ContiguousArray<StoredValue>] = []
        rows.reserveCapacity(insert.rows.count)
        // The row that first holds each unique value: by the value itself for a one-column
        // constraint (no array per row), by the tuple for a compound one.
        var firstByValue = FirstOccurrences(expecting: index.columns.count == 1 ? insert.rows.count : 0)
        var firstByTuple: [[StoredValue]: Int] = [:]
        var repeats = 0
        for values in insert.rows {
            let first: Int?
            if index.columns.count == 1 {
                let value = values[index.columns[0]]
                first = value.isNull ? nil : firstByValue.recordFirst(value, at: rows.count)
            } else {
                let tuple = index.columns.map { values[$0] }
                let hasNull = tuple.contains(where: \.isNull)
                first = hasNull ? nil : firstByTuple[tuple]
                if first == nil && !hasNull { firstByTuple[tuple] = rows.count }
            }
            guard let first else {
                rows.append(values)
                continue
            }
            switch onClash {
            case .ignore: repeats += 1
            case .update(let columns):
                if columns.isEmpty { repeats += 1 }
                for column in columns { rows[first][column] = values[column] }
            }
        }
        let keys = Array(try context.allocateKeys(entity: insert.number, count: rows.count))
        let step = setWrites.count
        setWrites.append(
            SetWrite(
                entity: insert.number, selection: .matching(nil),
                action: .upsert(
                    SetWrite.Upsert(rows: rows, keys: keys, uniqueColumns: index.columns, onClash: onClash))))
        return .upsert(model: insert.model, step: step, repeatsIgnored: repeats)
    }

    // MARK: Delete

    /// A delete's set writes: its rows, then wave by wave what its delete rules do, each step
    /// selecting by the keys an earlier step deleted; nil when a rule cannot be said that way (a
    /// cascade or deny on a to-one or many-to-many relationship, or a cycle of cascades).
    private mutating func deleteSteps(_ delete: StagedDelete, context: ObjectContext) -> Role? {
        let schema = context.schema
        var steps: [SetWrite] = []
        let base = setWrites.count
        var deletes: [(number: Int, step: Int)] = [(delete.number, base)]
        var clears: [(number: Int, step: Int)] = []
        steps.append(
            SetWrite(
                entity: delete.number, selection: .matching(delete.filter),
                action: .delete(tombstoneColumns: delete.model.preservedColumns)))
        var queue: [(number: Int, step: Int, path: Set<Int>)] = [(delete.number, base, [delete.number])]
        var next = 0
        while next < queue.count {
            let (number, step, path) = queue[next]
            next += 1
            let model = schema.models[number]
            for case let relation? in model.relations {
                guard let target = schema.number(of: relation.target) else { return nil }
                let targetModel = relation.target
                if relation.isToMany && !relation.inverseIsToMany {
                    let column = targetModel.column(ofProperty: relation.inverseProperty)
                    guard column >= 0 else { return nil }
                    let selection = SetWrite.Selection.referencing(column: column, deletedBy: step)
                    switch relation.deleteRule {
                    case .deny:
                        let denial = SetWrite.DeleteDenial(
                            entityName: model.name, property: model.properties[relation.property].name,
                            relatedEntityName: targetModel.name)
                        steps.append(SetWrite(entity: target, selection: selection, action: .deny(denial)))
                    case .cascade:
                        guard !path.contains(target) else { return nil }
                        let added = base + steps.count
                        steps.append(
                            SetWrite(
                                entity: target, selection: selection,
                                action: .delete(tombstoneColumns: targetModel.preservedColumns)))
                        deletes.append((target, added))
                        queue.append((target, added, path.union([target])))
                    case .nullify:
                        clears.append((target, base + steps.count))
                        steps.append(
                            SetWrite(
                                entity: target, selection: selection,
                                action: .update([SetWrite.ColumnAssignment(column: column, .value(.null))])))
                    }
                } else if relation.isToMany {
                    // Many-to-many: the engine drops the join rows of deleted rows itself.
                    guard relation.deleteRule == .nullify else { return nil }
                } else {
                    guard relation.deleteRule == .nullify else { return nil }
                    if !relation.inverseIsToMany {
                        // One-to-one: the other side's key back to these rows is cleared.
                        let inverse = targetModel.column(ofProperty: relation.inverseProperty)
                        guard inverse >= 0 else { continue }
                        clears.append((target, base + steps.count))
                        steps.append(
                            SetWrite(
                                entity: target, selection: .referencing(column: inverse, deletedBy: step),
                                action: .update([SetWrite.ColumnAssignment(column: inverse, .value(.null))])))
                    }
                }
            }
            if steps.count > 256 { return nil }
        }
        setWrites += steps
        return .delete(model: delete.model, deletes: deletes, clears: clears)
    }

    // MARK: Results

    /// The batch result of an engine-run batch.
    func result(_ role: Role, _ results: [SetWriteResult], storeIdentifier: UUID, schema: Schema) -> BatchResult {
        switch role {
        case .update(let model, let step):
            var result = BatchResult(kind: .update, entityName: model.name, storeIdentifier: storeIdentifier)
            if !results[step].keys.isEmpty {
                result.updated.append(BatchResult.EntityKeys(entityName: model.name, keys: results[step].keys))
            }
            return result
        case .upsert(let model, let step, let repeats):
            var result = BatchResult(kind: .insert, entityName: model.name, storeIdentifier: storeIdentifier)
            result.inserted = results[step].insertedKeys
            if !results[step].keys.isEmpty {
                result.updated.append(BatchResult.EntityKeys(entityName: model.name, keys: results[step].keys))
            }
            result.ignoredCount = results[step].ignoredCount + repeats
            return result
        case .delete(let model, let deletes, let clears):
            var result = BatchResult(kind: .delete, entityName: model.name, storeIdentifier: storeIdentifier)
            for (number, step) in clears {
                for key in results[step].keys { result.note(key, entity: schema.models[number].name, in: \.updated) }
            }
            for (number, step) in deletes {
                for key in results[step].keys { result.note(key, entity: schema.models[number].name, in: \.deleted) }
            }
            return result
        }
    }

    /// Brings the context's registered objects to what the set writes committed: deleted rows are
    /// let go; updated rows are read again from a fresh snapshot (their new values are the
    /// engine's to compute); relationship caches are dropped.
    func refresh(_ context: ObjectContext, results: [SetWriteResult]) throws {
        var stale: [(number: Int, key: Int64)] = []
        for (write, result) in zip(setWrites, results) {
            let registered = context.registry[write.entity]
            guard !registered.isEmpty else { continue }
            switch write.action {
            case .delete:
                for key in result.keys {
                    guard let object = registered[key] else { continue }
                    context.evict(object, number: write.entity, key: key)
                    object.state.insert(.deleted)
                }
            case .update, .upsert:
                for key in result.keys where registered[key] != nil { stale.append((write.entity, key)) }
            case .deny:
                continue
            }
        }
        if !stale.isEmpty {
            context.endSnapshot()
            let reader = try context.snapshot()
            for (number, key) in stale {
                guard let object = context.registry[number][key] else { continue }
                if let row = try reader.row(entity: number, key: key) {
                    object.replaceValues(with: row.values)
                    object.version = row.version
                } else {
                    context.evict(object, number: number, key: key)
                    object.state.insert(.deleted)
                }
            }
            context.endSnapshot()
        }
        context.dropRelationshipCaches()
    }
}

extension StoredValue {
    /// Whether adding this operand (or multiplying by it) can turn a stored real, which is never
    /// NaN, into NaN: an infinity added (to the opposite infinity), or zero or an infinity as a
    /// factor (of an infinity, or of zero).
    fileprivate func mayGiveNaN(multiplying: Bool) -> Bool {
        let number: Double
        switch self {
        case .real(let real): number = real
        case .integer(let integer): number = Double(integer)
        default: return false
        }
        return number.isInfinite || number.isNaN || (multiplying && number == 0)
    }
}
