import Foundation
import StrataStorage

/// The row writes of a save's staged batches, worked out against one fresh snapshot when the save
/// runs: the set-based operations read their rows in the engine (its own filter, no objects) and
/// become row writes of the save's one change set, each carrying the version it read. So every
/// guarantee of a save holds for them: atomicity, version checks, unique constraints, history.
///
/// Batches apply in issue order, each seeing what the earlier ones did (``rows``, the overlay).
struct BatchExpansion {
    /// One row a batch changed: its values now, and what the store held.
    struct Row {
        var values: ContiguousArray<StoredValue>
        /// The stored values; nil for a row inserted by this save.
        var original: ContiguousArray<StoredValue>?
        /// The stored version (0 for an insert).
        var version: Int64
        var isDeleted = false

        var isInsert: Bool { original == nil }
    }

    let context: ObjectContext
    let reader: any StoreReader
    /// The overlay: per entity number, the rows changed so far, by key.
    var rows: [Int: [Int64: Row]] = [:]
    /// Keys in the order they were first changed, per entity (deterministic writes and history).
    var order: [Int: [Int64]] = [:]
    /// Inserts of `.fail` batches, kept out of the overlay until a later batch reads their entity:
    /// per entity number, each batch's rows with the keys reserved for them (the staged rows
    /// array itself, not a copy per row).
    var plainInserts: [Int: [PlainInsertRun]] = [:]
    var results: [BatchResult] = []
    /// Whether a batch inserts with `.fail`: a unique clash is then diagnosed by row.
    var hasPlainInserts = false

    /// The rows at most one filter reads at once by key or value list.
    static let chunk = 2_000

    init(context: ObjectContext, reader: any StoreReader) {
        self.context = context
        self.reader = reader
    }

    mutating func run(_ batches: [StagedBatch]) throws {
        for batch in batches {
            switch batch {
            case .insert(let insert): try run(insert)
            case .update(let update): try run(update)
            case .delete(let delete): try run(delete)
            }
        }
    }

    var storeIdentifier: UUID { context.storeIdentifier }

    func objectID(_ number: Int, _ key: Int64) -> ObjectID {
        ObjectID(storeIdentifier: storeIdentifier, entityName: context.schema.models[number].name, primaryKey: key)
    }

    // MARK: overlay

    /// Records a changed row (first change: remembers its order).
    mutating func set(_ number: Int, _ key: Int64, _ row: Row) {
        if rows[number, default: [:]].updateValue(row, forKey: key) == nil { order[number, default: []].append(key) }
    }

    /// Moves the `.fail` inserts of an entity into the overlay, before a batch reads the entity.
    mutating func absorbPlainInserts(_ number: Int) {
        guard let runs = plainInserts.removeValue(forKey: number) else { return }
        for run in runs {
            for (key, values) in zip(run.keys, run.rows) {
                set(number, key, Row(values: values, original: nil, version: 0))
            }
        }
    }

    /// The rows of an entity matching `filter` as this save leaves them so far: the store's
    /// (read in the engine) with the overlay's changes applied, plus the overlay's own matches.
    mutating func select(_ number: Int, filter: Filter?) throws -> [(key: Int64, row: Row)] {
        absorbPlainInserts(number)
        let overlay = rows[number] ?? [:]
        var found: [(key: Int64, row: Row)] = []
        try reader.forEachRow(for: FetchPlan(entity: number, filter: filter)) { stored in
            guard overlay[stored.key] == nil else { return }
            found.append((stored.key, Row(values: stored.values, original: stored.values, version: stored.version)))
        }
        if !overlay.isEmpty {
            let evaluator = filter.map(FilterEvaluator.init)
            for key in order[number] ?? [] {
                guard let row = overlay[key], !row.isDeleted else { continue }
                if evaluator?.matches(row.values, key: key) ?? true { found.append((key, row)) }
            }
        }
        return found
    }

    /// The rows of an entity whose `column` holds one of `keys`, as this save leaves them so far.
    mutating func select(_ number: Int, column: Int, in keys: [Int64]) throws -> [(key: Int64, row: Row)] {
        guard !keys.isEmpty else { return [] }
        absorbPlainInserts(number)
        let overlay = rows[number] ?? [:]
        var found: [(key: Int64, row: Row)] = []
        var start = 0
        while start < keys.count {
            let part = keys[start..<min(start + Self.chunk, keys.count)].map { StoredValue.integer($0) }
            let plan = FetchPlan(entity: number, filter: .isIn(column: column, values: part), inKeyOrder: false)
            try reader.forEachRow(for: plan) { stored in
                guard overlay[stored.key] == nil else { return }
                found.append((stored.key, Row(values: stored.values, original: stored.values, version: stored.version)))
            }
            start += Self.chunk
        }
        if !overlay.isEmpty {
            let wanted = Set(keys)
            for key in order[number] ?? [] {
                guard let row = overlay[key], !row.isDeleted, case .integer(let target) = row.values[column],
                    wanted.contains(target)
                else { continue }
                found.append((key, row))
            }
        }
        return found
    }

    /// The row with this key as this save leaves it so far, or nil when it does not exist.
    mutating func row(_ number: Int, key: Int64) throws -> Row? {
        absorbPlainInserts(number)
        if let row = rows[number]?[key] { return row.isDeleted ? nil : row }
        guard let stored = try reader.row(entity: number, key: key) else { return nil }
        return Row(values: stored.values, original: stored.values, version: stored.version)
    }

    // MARK: insert

    private mutating func run(_ batch: StagedInsert) throws {
        let model = batch.model
        let number = batch.number
        try checkLinks(of: batch)
        var result = BatchResult(kind: .insert, entityName: model.name, storeIdentifier: storeIdentifier)
        defer { results.append(result) }
        if case .fail = batch.clash {
            let keys = try context.allocateKeys(entity: number, count: batch.rows.count)
            plainInserts[number, default: []].append(PlainInsertRun(keys: keys, rows: batch.rows))
            result.inserted.append(contentsOf: keys)
            hasPlainInserts = true
            return
        }
        absorbPlainInserts(number)
        let unique = batch.uniqueColumns
        var (taken, stored) = try existingKeys(number, unique: unique, rows: batch.rows)
        var decisions: [Int64?] = [] // per row: the key it updates, or nil to insert
        var newRows: [Int] = []
        for (index, values) in batch.rows.enumerated() {
            let tuple = unique.map { values[$0] }
            if tuple.contains(where: \.isNull) {
                decisions.append(nil)
                newRows.append(index)
                continue
            }
            if let key = taken[tuple] {
                decisions.append(key)
            } else {
                decisions.append(nil)
                newRows.append(index)
                taken[tuple] = -Int64(index) - 1 // a row of this batch, keyed below
            }
        }
        let keys = Array(try context.allocateKeys(entity: number, count: newRows.count))
        var keyOfRow: [Int: Int64] = [:]
        var updatedKeys = Set<Int64>()
        for (slot, index) in newRows.enumerated() {
            keyOfRow[index] = keys[slot]
            set(number, keys[slot], Row(values: batch.rows[index], original: nil, version: 0))
            result.inserted.append(keys[slot])
        }
        for (index, decision) in decisions.enumerated() {
            guard var key = decision else { continue }
            if key < 0, let inserted = keyOfRow[Int(-key - 1)] { key = inserted }
            guard case .update(let columns) = batch.clash, !columns.isEmpty,
                var row = rows[number]?[key] ?? stored.removeValue(forKey: key)
            else {
                result.ignoredCount += 1
                continue
            }
            let before = row.values
            for column in columns { row.values[column] = batch.rows[index][column] }
            if row.values == before {
                // Nothing to set: the stored row holds these values already.
                if !row.isInsert && !updatedKeys.contains(key) { result.ignoredCount += 1 }
                // A later repeat may still change it.
                if rows[number]?[key] == nil { stored[key] = row }
                continue
            }
            set(number, key, row)
            if !row.isInsert, updatedKeys.insert(key).inserted { result.note(key, entity: model.name, in: \.updated) }
        }
    }

    /// Refuses a batch whose rows link a to-one relationship to a row that does not exist (an ID
    /// of a deleted object, say): nothing is written, and the first such row is named.
    mutating func checkLinks(of batch: StagedInsert) throws {
        let columns = context.schema.storeSchema.entities[batch.number].columns
        for (column, schemaColumn) in columns.enumerated() {
            guard let target = schemaColumn.referencedEntity else { continue }
            // Rows the same save inserts or deletes as objects count as they will be.
            var known: [Int64: Bool] = [:]
            let targetModel = context.schema.models[target]
            for object in context.inserted where object.model === targetModel && object.key > 0 {
                known[object.key] = !object.state.contains(.deleted)
            }
            for object in context.deleted where object.model === targetModel && object.key > 0 {
                known[object.key] = false
            }
            for (index, values) in batch.rows.enumerated() {
                guard case .integer(let key) = values[column] else { continue }
                let exists: Bool
                if let answer = known[key] {
                    exists = answer
                } else {
                    exists = try row(target, key: key) != nil
                    known[key] = exists
                }
                guard !exists else { continue }
                throw StrataError.validation([
                    ValidationIssue(
                        entity: batch.model.name, property: context.columnName(column, batch.model),
                        message: """
                            row \(index) of the batch insert links to \(objectID(target, key).uriString), which does \
                            not exist (deleted, or never saved in this store); nothing was written
                            """)
                ])
            }
        }
    }

    /// The keys of the rows (stored or changed by this save) holding each unique value of `rows`,
    /// and the stored rows found, by key.
    private mutating func existingKeys(
        _ number: Int, unique: [Int], rows batchRows: [ContiguousArray<StoredValue>]
    ) throws -> (taken: [[StoredValue]: Int64], stored: [Int64: Row]) {
        var taken: [[StoredValue]: Int64] = [:]
        var found: [Int64: Row] = [:]
        let overlay = rows[number] ?? [:]
        var tuples: [[StoredValue]] = []
        var seen = Set<[StoredValue]>()
        for values in batchRows {
            let tuple = unique.map { values[$0] }
            if !tuple.contains(where: \.isNull), seen.insert(tuple).inserted { tuples.append(tuple) }
        }
        var start = 0
        while start < tuples.count {
            let part = tuples[start..<min(start + Self.chunk, tuples.count)]
            let filter: Filter =
                unique.count == 1
                ? .isIn(column: unique[0], values: part.map { $0[0] })
                : .or(part.map { tuple in .and(zip(unique, tuple).map { .compare(column: $0, .equal, $1) }) })
            try reader.forEachRow(for: FetchPlan(entity: number, filter: filter, inKeyOrder: false)) { stored in
                guard overlay[stored.key] == nil else { return }
                taken[unique.map { stored.values[$0] }] = stored.key
                found[stored.key] = Row(values: stored.values, original: stored.values, version: stored.version)
            }
            start += Self.chunk
        }
        for (key, row) in overlay where !row.isDeleted {
            let tuple = unique.map { row.values[$0] }
            if !tuple.contains(where: \.isNull) { taken[tuple] = key }
        }
        return (taken, found)
    }

    // MARK: update

    private mutating func run(_ batch: StagedUpdate) throws {
        let model = batch.model
        let number = batch.number
        var result = BatchResult(kind: .update, entityName: model.name, storeIdentifier: storeIdentifier)
        defer { results.append(result) }
        for (key, found) in try select(number, filter: batch.filter) {
            var row = found
            for (column, operation) in batch.assignments {
                row.values[column] = try apply(
                    operation, to: row.values[column], model: model, column: column, key: key)
            }
            set(number, key, row)
            // Counted even when an earlier batch of this save inserted the row: the update
            // selected and changed it (history still records it as one insert).
            result.note(key, entity: model.name, in: \.updated)
        }
    }

    private func apply(
        _ operation: StagedUpdate.Operation, to value: StoredValue, model: EntityModel, column: Int, key: Int64
    ) throws -> StoredValue {
        func overflow() -> StrataError {
            .validation([
                ValidationIssue(
                    entity: model.name, property: context.columnName(column, model),
                    message: """
                        the batch update's arithmetic on \(objectID(model, key).uriString) goes beyond the range of a \
                        64-bit integer; nothing was written
                        """)
            ])
        }
        // Infinity minus infinity and zero times infinity give NaN, which no engine stores.
        func notNaN(_ result: Double) throws -> StoredValue {
            guard result.isNaN else { return .real(result) }
            throw SetWrite.notANumber(
                entityName: model.name, column: context.columnName(column, model), key: key,
                storeIdentifier: storeIdentifier)
        }
        switch (operation, value) {
        case (.value(let constant), _): return constant
        case (_, .null): return .null
        case (.add(.integer(let amount)), .integer(let current)):
            let (sum, overflowed) = current.addingReportingOverflow(amount)
            if overflowed { throw overflow() }
            return .integer(sum)
        case (.multiply(.integer(let factor)), .integer(let current)):
            let (product, overflowed) = current.multipliedReportingOverflow(by: factor)
            if overflowed { throw overflow() }
            return .integer(product)
        case (.add(.real(let amount)), .real(let current)): return try notNaN(current + amount)
        case (.multiply(.real(let factor)), .real(let current)): return try notNaN(current * factor)
        default:
            let name = "\(model.name).\(context.columnName(column, model))"
            throw StrataError.misuse("batchUpdate: arithmetic on \(name) needs a number of its type")
        }
    }

    func objectID(_ model: EntityModel, _ key: Int64) -> ObjectID {
        ObjectID(storeIdentifier: storeIdentifier, entityName: model.name, primaryKey: key)
    }
}

/// The rows of one `.fail` batch insert and the keys reserved for them, in order: the staged
/// rows array as it was staged (one reference for the batch, not a copy per row).
struct PlainInsertRun {
    let keys: Range<Int64>
    let rows: [ContiguousArray<StoredValue>]
}
