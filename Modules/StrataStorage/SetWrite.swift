public import Foundation

/// A set-based write that the engine runs itself, inside the commit's write transaction: the
/// rows it selects are found and changed where they are, with no row travelling to the core and
/// back (issue 25: a batch update or delete as one `UPDATE … WHERE` or one cursor pass).
///
/// A ``ChangeSet`` lists them in ``ChangeSet/setWrites``; an engine that runs them
/// (``SetWritingEngine``) applies them **after** every row write and link of the change set, in
/// list order, each seeing the rows as the earlier ones left them, and returns one
/// ``SetWriteResult`` per entry. They are part of the one atomic commit: a failure in any of them
/// writes nothing at all.
///
/// Semantics every engine keeps (the conformance kit's "Set writes" group checks them):
/// - **Update** (``Action/update(_:)``): each selected row gets the assignments, computed from its
///   own stored values (``Assignment``). A row whose values would not change is not written and
///   not listed. A written row's version grows by one, as with any update, so a context that read
///   it gets `.conflict` at its next save. Unique indexes hold (`.constraintViolation`, as for
///   row writes); an integer result past `Int64` is ``overflow(entityName:column:key:storeIdentifier:)``.
/// - **Delete** (``Action/delete(tombstoneColumns:)``): the selected rows go, with every join link
///   that names them (as for row deletes); the result lists each deleted key with the values of
///   `tombstoneColumns` it held.
/// - **Upsert** (``Action/upsert(_:)``): each row is inserted with its key (version 1), or, when a
///   stored row holds its unique values, updates that row's listed columns (version + 1) or is
///   ignored; see ``Upsert``.
/// - **Deny** (``Action/deny(_:)``): writes nothing; if any row is selected, the whole commit
///   fails with ``DeleteDenial/error(holders:relatedCount:storeIdentifier:)``.
/// - Rows are selected by ``Selection``: a filter (the reference semantics of ``Filter``), or the
///   rows whose reference column holds a key an earlier delete in the list removed.
///
/// ```swift
/// // Delete every entry of category "old" (entity 0) and, by cascade, their lines (entity 1,
/// // whose column 1 refers to the entry), in one commit.
/// var changes = ChangeSet()
/// changes.setWrites = [
///     SetWrite(entity: 0, selection: .matching(.compare(column: 2, .equal, .text("old"))),
///              action: .delete(tombstoneColumns: [])),
///     SetWrite(entity: 1, selection: .referencing(column: 1, deletedBy: 0),
///              action: .delete(tombstoneColumns: [])),
/// ]
/// let results = try engine.commitReturningResults(changes)  // results[0].keys: the entries
/// ```
public struct SetWrite: Sendable, Hashable {
    /// Which rows of the entity a set write acts on.
    public enum Selection: Sendable, Hashable {
        /// The rows matching the filter; every row when nil.
        case matching(Filter?)
        /// The rows whose reference `column` holds a key that the set write at index `deletedBy`
        /// (an earlier ``Action/delete(tombstoneColumns:)`` in the same list) deleted.
        case referencing(column: Int, deletedBy: Int)
    }

    /// A new value for one column, computed from the row's stored value.
    public enum Assignment: Sendable, Hashable {
        /// The column gets this value.
        case value(StoredValue)
        /// The column's value plus this one (same storage class: integer or real). Null stays null.
        case add(StoredValue)
        /// The column's value times this one (same storage class: integer or real). Null stays null.
        case multiply(StoredValue)

        /// The new value of a column holding `current`; nil when an integer result passes `Int64`.
        /// The reference semantics every engine must match.
        public func applied(to current: StoredValue) -> StoredValue? {
            switch (self, current) {
            case (.value(let constant), _): return constant
            case (_, .null): return .null
            case (.add(.integer(let amount)), .integer(let value)):
                let (sum, overflowed) = value.addingReportingOverflow(amount)
                return overflowed ? nil : .integer(sum)
            case (.multiply(.integer(let factor)), .integer(let value)):
                let (product, overflowed) = value.multipliedReportingOverflow(by: factor)
                return overflowed ? nil : .integer(product)
            case (.add(.real(let amount)), .real(let value)): return .real(value + amount)
            case (.multiply(.real(let factor)), .real(let value)): return .real(value * factor)
            default: return current
            }
        }
    }

    /// One column's assignment.
    public struct ColumnAssignment: Sendable, Hashable {
        /// The column number (an attribute or reference column of the entity).
        public var column: Int
        /// What it gets.
        public var assignment: Assignment

        /// An assignment.
        public init(column: Int, _ assignment: Assignment) {
            self.column = column
            self.assignment = assignment
        }
    }

    /// What a deny rule says when rows it protects would go.
    public struct DeleteDenial: Sendable, Hashable {
        /// The entity whose rows are being deleted (the holders of the relationship).
        public var entityName: String
        /// The relationship that denies.
        public var property: String
        /// The related entity's name (the selected rows' entity).
        public var relatedEntityName: String

        /// A denial.
        public init(entityName: String, property: String, relatedEntityName: String) {
            self.entityName = entityName
            self.property = property
            self.relatedEntityName = relatedEntityName
        }

        /// The error a deny step throws: `.validation` naming up to five of the holders (the keys
        /// the selected rows refer to, ascending) by URI, and how many related rows there are.
        public func error(holders: [Int64], relatedCount: Int, storeIdentifier: UUID) -> StrataError {
            let sorted = holders.sorted()
            var shown = sorted.prefix(5).map {
                ObjectID(storeIdentifier: storeIdentifier, entityName: entityName, primaryKey: $0).uriString
            }.joined(separator: ", ")
            if sorted.count > 5 { shown += " and \(sorted.count - 5) more" }
            return .validation([
                ValidationIssue(
                    entity: entityName, property: property,
                    message: """
                        \(shown): cannot delete while \(relatedCount) related \(relatedEntityName) object(s) exist \
                        (deny rule); nothing was deleted
                        """)
            ])
        }
    }

    /// Rows to insert, matched on a unique index: a row whose unique values a stored row holds
    /// already updates that row or is ignored (an upsert, `INSERT … ON CONFLICT`).
    public struct Upsert: Sendable, Hashable {
        /// What a row whose unique values are taken does.
        public enum OnClash: Sendable, Hashable {
            /// Nothing: the row is counted in ``SetWriteResult/ignoredCount``.
            case ignore
            /// The stored row gets the row's values in these columns (ascending); when none differ,
            /// nothing is written and the row is counted as ignored.
            case update(columns: [Int])
        }

        /// Full rows in ``EntitySchema/columns`` order.
        public var rows: [ContiguousArray<StoredValue>]
        /// The key each row gets if it is inserted (fresh keys from
        /// ``StorageEngine/allocateKeys(entity:count:)``; those of rows not inserted stay unused).
        public var keys: [Int64]
        /// The columns of one unique index of the entity (``IndexSchema/isUnique``), in its order.
        /// The core sends no two rows with the same non-null values in them; a row with a null in
        /// them never clashes and is inserted.
        public var uniqueColumns: [Int]
        /// What a clash does.
        public var onClash: OnClash

        /// An upsert.
        public init(
            rows: [ContiguousArray<StoredValue>], keys: [Int64], uniqueColumns: [Int], onClash: OnClash
        ) {
            self.rows = rows
            self.keys = keys
            self.uniqueColumns = uniqueColumns
            self.onClash = onClash
        }
    }

    /// What a set write does to the rows it selects.
    public enum Action: Sendable, Hashable {
        /// Each row gets the assignments (columns distinct, ascending).
        case update([ColumnAssignment])
        /// The rows are deleted; the result carries the values of `tombstoneColumns` of each.
        case delete(tombstoneColumns: [Int])
        /// Any selected row fails the commit (a deny delete rule).
        case deny(DeleteDenial)
        /// Inserts rows or updates the stored rows that hold their unique values. The selection is
        /// ignored (send `.matching(nil)`). Other unique indexes hold as for any insert or update
        /// (`.constraintViolation`).
        case upsert(Upsert)
    }

    /// The entity number.
    public var entity: Int
    /// The rows acted on.
    public var selection: Selection
    /// What is done to them.
    public var action: Action

    /// A set write.
    public init(entity: Int, selection: Selection, action: Action) {
        self.entity = entity
        self.selection = selection
        self.action = action
    }

    /// The error for an integer assignment past `Int64` (``Assignment/applied(to:)`` returned nil).
    public static func overflow(
        entityName: String, column: String, key: Int64, storeIdentifier: UUID
    )
        -> StrataError
    {
        let id = ObjectID(storeIdentifier: storeIdentifier, entityName: entityName, primaryKey: key)
        return .validation([
            ValidationIssue(
                entity: entityName, property: column,
                message: """
                    the batch update's arithmetic on \(id.uriString) goes beyond the range of a 64-bit integer; \
                    nothing was written
                    """)
        ])
    }
}

/// What one ``SetWrite`` did, in the same position as the set write in ``ChangeSet/setWrites``.
public struct SetWriteResult: Sendable, Hashable {
    /// The keys of the rows updated or deleted (none for a deny; for an upsert the stored rows it
    /// updated), in the order the engine met them.
    public var keys: [Int64]
    /// For a delete, per deleted row (same order as ``keys``), the values of the tombstone
    /// columns it held, in the order of ``SetWrite/Action/delete(tombstoneColumns:)``; empty
    /// otherwise.
    public var tombstones: [[StoredValue]]
    /// For an upsert, the keys of the rows it inserted, in row order.
    public var insertedKeys: [Int64]
    /// For an upsert, how many rows were ignored (see ``SetWrite/Upsert/OnClash``).
    public var ignoredCount: Int

    /// A result.
    public init(keys: [Int64] = [], tombstones: [[StoredValue]] = [], insertedKeys: [Int64] = [], ignoredCount: Int = 0)
    {
        self.keys = keys
        self.tombstones = tombstones
        self.insertedKeys = insertedKeys
        self.ignoredCount = ignoredCount
    }
}

/// An engine that runs ``SetWrite``s inside its commits.
///
/// ``StorageEngine/commit(_:)`` of a change set with set writes on an engine that does not adopt
/// this protocol (or whose ``acceptsSetWrites`` is false) throws `.misuse`; the core then works the
/// batches out itself and never sends them.
///
/// ```swift
/// if let engine = engine as? any SetWritingEngine, engine.acceptsSetWrites {
///     let results = try engine.commitReturningResults(changes)
/// }
/// ```
public protocol SetWritingEngine: StorageEngine {
    /// Whether this engine runs set writes (a wrapper forwards its base engine's answer).
    var acceptsSetWrites: Bool { get }

    /// Commits `changes` as ``StorageEngine/commit(_:)`` does, running its
    /// ``ChangeSet/setWrites`` after its row writes in the same transaction, and returns one result
    /// per set write. When ``ChangeSet/history`` is set, the history appended holds the change set's
    /// own changes followed by ``ChangeSet/historyChanges(of:results:schema:)`` of the set writes.
    /// - Throws: the errors of ``StorageEngine/commit(_:)``; `.validation` from a deny step or an
    ///   integer overflow; `.misuse` for a set write that does not fit the schema (an unknown
    ///   entity or column, a `deletedBy` that is not an earlier delete).
    func commitReturningResults(_ changes: ChangeSet) throws -> [SetWriteResult]
}

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
