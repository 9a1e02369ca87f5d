/// One stored row: its primary key, its version and its column values.
///
/// `values` follows ``EntitySchema/columns`` order. Versions start at 1 on insert and grow
/// by one on every committed update or touch.
public struct StoredRow: Sendable, Hashable {
    public var key: Int64
    public var version: Int64
    public var values: ContiguousArray<StoredValue>

    public init(key: Int64, version: Int64, values: ContiguousArray<StoredValue>) {
        self.key = key
        self.version = version
        self.values = values
    }
}

/// A row to write: an insert (version becomes 1) or an update (version becomes
/// `expectedVersion + 1`, only if the stored version still equals `expectedVersion`).
public struct RowWrite: Sendable, Hashable {
    public var entity: Int
    public var key: Int64
    /// For updates, the version the context read. Ignored for inserts.
    public var expectedVersion: Int64
    public var values: ContiguousArray<StoredValue>

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
    public var entity: Int
    public var key: Int64
    public var expectedVersion: Int64

    public init(entity: Int, key: Int64, expectedVersion: Int64) {
        self.entity = entity
        self.key = key
        self.expectedVersion = expectedVersion
    }
}

/// One pair in a many-to-many join.
public struct JoinLink: Sendable, Hashable {
    public var join: Int
    public var leftKey: Int64
    public var rightKey: Int64

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
    public var inserts: [RowWrite] = []
    public var updates: [RowWrite] = []
    public var touches: [RowVersionCheck] = []
    public var deletes: [RowVersionCheck] = []
    public var links: [JoinLink] = []
    public var unlinks: [JoinLink] = []

    public init() {}

    /// Whether there is nothing to write.
    public var isEmpty: Bool {
        inserts.isEmpty && updates.isEmpty && touches.isEmpty && deletes.isEmpty && links.isEmpty && unlinks.isEmpty
    }
}
