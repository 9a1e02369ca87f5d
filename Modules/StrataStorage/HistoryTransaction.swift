public import Foundation

/// One committed change set, as the store's persistent history keeps it (issue 15, groundwork).
///
/// The core describes each save's changes in a ``HistoryRecord`` on the ``ChangeSet``; an
/// engine that keeps history (``HistoryStore``) appends it **in the commit's own transaction**,
/// assigns it the next ``token`` and the commit time, and reads it back as this value. A failed or
/// crashed commit therefore leaves no history, and a committed one always has it.
///
/// ```swift
/// for transaction in try engine.history(after: lastSeen, limit: 100) {
///     print(transaction.token, transaction.changes.count)
/// }
/// ```
public struct HistoryTransaction: Sendable, Hashable, Codable {
    /// Increases by at least one with every commit of the store, across processes; never reused.
    public var token: Int64
    /// When the commit happened (the engine's clock at commit).
    public var timestamp: Date
    /// Who committed: the context's author or name, nil when it had neither.
    public var author: String?
    /// What changed, one entry per object.
    public var changes: [HistoryChange]

    /// A history transaction.
    public init(token: Int64, timestamp: Date, author: String?, changes: [HistoryChange]) {
        self.token = token
        self.timestamp = timestamp
        self.author = author
        self.changes = changes
    }
}

/// What one save did to one object.
///
/// ```swift
/// let change = HistoryChange(entity: "Account", key: 7, kind: .update, changedProperties: ["balance"])
/// ```
public struct HistoryChange: Sendable, Hashable, Codable {
    /// Insert, update or delete.
    public enum Kind: String, Sendable, Hashable, Codable {
        /// The object was inserted.
        case insert
        /// Some of its attributes or relationships changed.
        case update
        /// The object was deleted.
        case delete
    }

    /// The entity's name (names survive migrations that renumber entities).
    public var entity: String
    /// The object's primary key.
    public var key: Int64
    /// What happened.
    public var kind: Kind
    /// The attributes and relationships the save changed; none for a delete. For an insert the core
    /// stores none and lists every property of the model when it reads the change back.
    public var changedProperties: [String]
    /// For a delete: the values of the attributes the model keeps after deletion (Core Data's
    /// "preserve after deletion"), by attribute name; empty otherwise.
    public var tombstone: [String: RecordedValue]

    /// A change.
    public init(
        entity: String, key: Int64, kind: Kind, changedProperties: [String],
        tombstone: [String: RecordedValue] = [:]
    ) {
        self.entity = entity
        self.key = key
        self.kind = kind
        self.changedProperties = changedProperties
        self.tombstone = tombstone
    }
}

/// The history the core hands an engine with a ``ChangeSet``: everything of a
/// ``HistoryTransaction`` but the token and the time, which the engine assigns at commit.
///
/// ```swift
/// changes.history = HistoryRecord(author: "importer", changes: described)
/// ```
public struct HistoryRecord: Sendable, Hashable {
    /// Who commits.
    public var author: String?
    /// What the change set does, one entry per object.
    public var changes: [HistoryChange]

    /// A record.
    public init(author: String?, changes: [HistoryChange]) {
        self.author = author
        self.changes = changes
    }
}

/// An engine that keeps persistent history: the engine side of issue 15's history.
///
/// Contract:
/// - ``StorageEngine/commit(_:)`` of a change set whose ``ChangeSet/history`` is set appends one
///   ``HistoryTransaction`` in the same engine transaction as the data, with the next token
///   (``currentHistoryToken()`` + 1 or more) and the commit time; nothing when it is nil.
/// - ``history(after:limit:)`` returns the transactions with a token greater than `after`, in
///   token order, at most `limit` of them, from one consistent snapshot.
/// - ``deleteHistory(before:)`` deletes the transactions with a token less than `before`; tokens
///   are never reused afterwards.
/// - Tokens are shared by every process on the store and survive reopening.
///
/// ```swift
/// let start = try engine.currentHistoryToken()
/// try engine.commit(changes)
/// let appended = try engine.history(after: start, limit: nil)
/// ```
public protocol HistoryStore: StorageEngine {
    /// The token of the last committed history transaction, 0 when there is none yet.
    /// - Throws: the engine's typed errors.
    func currentHistoryToken() throws -> Int64

    /// The history transactions after `token`, oldest first, at most `limit` (nil: all).
    /// - Throws: `.storeCorrupt` for a history entry that does not decode; the engine's typed errors.
    func history(after token: Int64, limit: Int?) throws -> [HistoryTransaction]

    /// Deletes the history transactions before `token`.
    /// - Throws: the engine's typed errors.
    func deleteHistory(before token: Int64) throws
}
