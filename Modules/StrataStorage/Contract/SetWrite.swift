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

    /// The error for arithmetic whose result is NaN (infinity minus infinity, zero times
    /// infinity), which no engine stores.
    public static func notANumber(
        entityName: String, column: String, key: Int64, storeIdentifier: UUID
    )
        -> StrataError
    {
        arithmeticIssue(entityName: entityName, column: column, key: key, storeIdentifier: storeIdentifier) {
            """
            the batch update's arithmetic on \($0) gives NaN (infinity minus infinity, or zero times infinity), \
            which cannot be stored; nothing was written. Leave that row out of the batch or assign it a value
            """
        }
    }

    /// The error for an integer assignment past `Int64` (``Assignment/applied(to:)`` returned nil).
    public static func overflow(
        entityName: String, column: String, key: Int64, storeIdentifier: UUID
    )
        -> StrataError
    {
        arithmeticIssue(entityName: entityName, column: column, key: key, storeIdentifier: storeIdentifier) {
            "the batch update's arithmetic on \($0) goes beyond the range of a 64-bit integer; nothing was written"
        }
    }

    /// `.validation` for one row's column, its message made from the row's URI.
    private static func arithmeticIssue(
        entityName: String, column: String, key: Int64, storeIdentifier: UUID, message: (String) -> String
    ) -> StrataError {
        let id = ObjectID(storeIdentifier: storeIdentifier, entityName: entityName, primaryKey: key)
        return .validation([
            ValidationIssue(entity: entityName, property: column, message: message(id.uriString))
        ])
    }
}
