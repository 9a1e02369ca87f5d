/// One stored row: its primary key, its version and its column values.
///
/// `values` follows ``EntitySchema/columns`` order. Versions start at 1 on insert and grow
/// by one on every committed update or touch.
public struct StoredRow: Sendable, Hashable {
    /// The primary key.
    public var key: Int64
    /// The row's version.
    public var version: Int64
    /// Column values in schema order.
    public var values: ContiguousArray<StoredValue>

    /// A row.
    public init(key: Int64, version: Int64, values: ContiguousArray<StoredValue>) {
        self.key = key
        self.version = version
        self.values = values
    }
}

/// A row to write: an insert (version becomes 1) or an update (version becomes
/// `expectedVersion + 1`, only if the stored version still equals `expectedVersion`).
public struct RowWrite: Sendable, Hashable {
    /// The entity number.
    public var entity: Int
    /// The primary key.
    public var key: Int64
    /// For updates, the version the context read. Ignored for inserts.
    public var expectedVersion: Int64
    /// The full row to store.
    public var values: ContiguousArray<StoredValue>
    /// For updates, the columns whose values differ from the row stored at `expectedVersion`,
    /// ascending, when the writer knows them (a batch update does); nil when it does not. Every
    /// other column of ``values`` holds the stored value, so an engine may write only these
    /// (sparing the indexes of unchanged columns); one that ignores it writes the same row.
    public var changedColumns: [Int]?

    /// A row write.
    public init(
        entity: Int, key: Int64, expectedVersion: Int64, values: ContiguousArray<StoredValue>,
        changedColumns: [Int]? = nil
    ) {
        self.entity = entity
        self.key = key
        self.expectedVersion = expectedVersion
        self.values = values
        self.changedColumns = changedColumns
    }
}

/// A version check on a row that is deleted, touched (its version bumped with no value change,
/// because one of its to-many relationships changed) or only verified (see ``ChangeSet/verifies``).
public struct RowVersionCheck: Sendable, Hashable {
    /// The entity number.
    public var entity: Int
    /// The primary key.
    public var key: Int64
    /// The version the context read.
    public var expectedVersion: Int64

    /// A version check.
    public init(entity: Int, key: Int64, expectedVersion: Int64) {
        self.entity = entity
        self.key = key
        self.expectedVersion = expectedVersion
    }
}

/// One pair in a many-to-many join.
public struct JoinLink: Sendable, Hashable {
    /// The join number.
    public var join: Int
    /// The key of the left entity's row.
    public var leftKey: Int64
    /// The key of the right entity's row.
    public var rightKey: Int64

    /// A link.
    public init(join: Int, leftKey: Int64, rightKey: Int64) {
        self.join = join
        self.leftKey = leftKey
        self.rightKey = rightKey
    }
}

/// Everything one `save()` writes. An engine commits it whole, in one transaction, or not at all.
///
/// Engines apply it in this order: result guards and verifies, deletes, unlinks, updates,
/// touches, inserts, links. Deleting a row also removes every join link that names it.
/// ``cursorMoves`` are checked and applied in the same transaction; their conflicts are reported
/// with the rows'.
public struct ChangeSet: Sendable, Hashable {
    /// New rows (version 1).
    public var inserts: [RowWrite] = []
    /// Changed rows, version-checked.
    public var updates: [RowWrite] = []
    /// Rows whose version is bumped without a value change.
    public var touches: [RowVersionCheck] = []
    /// Rows to delete, version-checked.
    public var deletes: [RowVersionCheck] = []
    /// Many-to-many links to add.
    public var links: [JoinLink] = []
    /// Many-to-many links to remove.
    public var unlinks: [JoinLink] = []
    /// Rows that are not written but must still have `expectedVersion` when the commit
    /// applies: the engine checks each one inside the commit's transaction, changes nothing
    /// about it (its version is not bumped), and treats a mismatch or a missing row as a
    /// conflict like any other (nothing is written; the row is listed in `.conflict`). The core
    /// fills it from ``Strata/ObjectContext/requireUnchanged(_:)``; a row also updated, touched or
    /// deleted in the same change set is not listed here.
    ///
    /// ```swift
    /// // Debit account 7 (read at version 3) only if account 12, read at version 5 to decide
    /// // the debit, is still at version 5 when the commit applies.
    /// var changes = ChangeSet()
    /// changes.updates = [RowWrite(entity: 0, key: 7, expectedVersion: 3, values: debited)]
    /// changes.verifies = [RowVersionCheck(entity: 0, key: 12, expectedVersion: 5)]
    /// try engine.commit(changes)  // .conflict naming row 12 if it changed; nothing written
    /// ```
    public var verifies: [RowVersionCheck] = []
    /// Guarded predicate reads (``ResultSetGuard``): for each, the rows of its entity matching its
    /// filter must be exactly its expected keys at their expected versions when the commit
    /// applies. The engine re-runs each filter inside the commit's transaction before writing
    /// anything; any row that appeared, vanished or changed is a conflict (nothing is written; the
    /// rows are listed in `.conflict`). Like verifies, guards write nothing. The core fills it from
    /// ``Strata/ObjectContext/requireUnchangedResults(of:)``.
    ///
    /// ```swift
    /// // Commit the insert only if entity 0 still has no row with column 0 equal to 4.
    /// var changes = ChangeSet()
    /// changes.inserts = [RowWrite(entity: 0, key: 9, expectedVersion: 0, values: [.integer(4)])]
    /// let orgFour = Filter.compare(column: 0, .equal, .integer(4))
    /// changes.resultGuards = [ResultSetGuard(entity: 0, filter: orgFour, expected: [:])]
    /// try engine.commit(changes)
    /// ```
    public var resultGuards: [ResultSetGuard] = []
    /// The history of this change set, which an engine that keeps history (``HistoryStore``)
    /// appends in the commit's own transaction; nil for none (issue 15, groundwork: the core
    /// does not fill it yet).
    public var history: HistoryRecord?
    /// Named history cursors to move in the same transaction as the rest (a consumer that writes
    /// what it made of a commit and moves its cursor past that commit, atomically). Each is a
    /// compare-and-set (``HistoryCursorMove``): a cursor that does not hold the expected token makes
    /// the whole commit throw `.conflict` and write nothing. Only engines that keep history
    /// (``HistoryStore``) are sent moves; they apply them whether or not the change set writes data,
    /// and a change set of cursor moves alone appends no history.
    public var cursorMoves: [HistoryCursorMove] = []
    /// Set-based writes (``SetWrite``) the engine runs itself after every row write and link, in
    /// order, in the same transaction; only engines that adopt ``SetWritingEngine`` are sent any,
    /// through ``SetWritingEngine/commitReturningResults(_:)``.
    public var setWrites: [SetWrite] = []

    /// An empty change set.
    public init() {}

    /// Whether there is nothing to write and nothing to check.
    public var isEmpty: Bool {
        inserts.isEmpty && updates.isEmpty && touches.isEmpty && deletes.isEmpty && links.isEmpty && unlinks.isEmpty
            && verifies.isEmpty && resultGuards.isEmpty && cursorMoves.isEmpty && setWrites.isEmpty
    }
}
