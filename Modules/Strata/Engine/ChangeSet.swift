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

    /// A row write.
    public init(entity: Int, key: Int64, expectedVersion: Int64, values: ContiguousArray<StoredValue>) {
        self.entity = entity
        self.key = key
        self.expectedVersion = expectedVersion
        self.values = values
    }
}

/// A version check on a row that is deleted or touched (its version bumped with no value change,
/// because one of its to-many relationships changed).
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
/// Engines apply it in this order: deletes, unlinks, updates, touches, inserts, links.
/// Deleting a row also removes every join link that names it.
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

    /// An empty change set.
    public init() {}

    /// Whether there is nothing to write.
    public var isEmpty: Bool {
        inserts.isEmpty && updates.isEmpty && touches.isEmpty && deletes.isEmpty && links.isEmpty && unlinks.isEmpty
    }
}
