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

    /// Decodes a transaction, reading its changes as the engines write them (single changes
    /// and runs of keys).
    /// - Throws: `DecodingError` for JSON of another shape.
    public init(from decoder: any Decoder) throws {
        let fields = try decoder.container(keyedBy: CodingKeys.self)
        token = try fields.decode(Int64.self, forKey: .token)
        timestamp = try fields.decode(Date.self, forKey: .timestamp)
        author = try fields.decodeIfPresent(String.self, forKey: .author)
        changes = try fields.decode(HistoryChangeList.self, forKey: .changes).changes
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
    /// What the change set does, one entry per object (with ``keyRuns``).
    public var changes: [HistoryChange]
    /// Further changes as runs of consecutive keys, after ``changes``: an engine stores them as
    /// one range or one list each, and readers get one change per key (``HistoryKeyRun``).
    public var keyRuns: [HistoryKeyRun]

    /// A record.
    public init(author: String?, changes: [HistoryChange], keyRuns: [HistoryKeyRun] = []) {
        self.author = author
        self.changes = changes
        self.keyRuns = keyRuns
    }

    /// Every change: ``changes``, then each run's keys.
    public var allChanges: [HistoryChange] { changes + keyRuns.flatMap(\.changes) }
}

/// An engine that keeps persistent history: the engine side of issue 15's history.
///
/// Contract:
/// - ``StorageEngine/commit(_:)`` of a change set that writes data and whose
///   ``ChangeSet/history`` is set appends one ``HistoryTransaction`` in the same engine
///   transaction as the data, with the next token (``currentHistoryToken()`` + 1 or more) and the
///   commit time; nothing when it is nil, and nothing for a change set that writes no data
///   (``ChangeSet/historyToAppend``).
/// - ``history(after:limit:)`` returns the transactions with a token greater than `after`, in
///   token order, at most `limit` of them, from one consistent snapshot.
/// - Named cursors (``setHistoryCursor(_:to:)``) live in the store, so every process sees them.
/// - ``StorageEngine/commit(_:)`` applies ``ChangeSet/cursorMoves`` in the commit's own transaction,
///   after ``ChangeSet/checkCursorMoves()``: each is a compare-and-set on the stored cursor, serialised
///   with every other commit, cursor move and trim of the store (another process's too); a cursor not
///   at its expected token is a ``VersionConflict`` with ``VersionConflict/historyCursor`` set, listed
///   with the row conflicts in one `.conflict`, and nothing at all is written. A change set of cursor
///   moves alone commits them and appends no history.
/// - ``deleteHistory(before:force:)`` deletes the transactions before a bound that never passes
///   the slowest cursor unless forced, nor the next commit's token (the last token + 1), reading
///   the cursors and deleting in one write transaction; tokens are never reused afterwards.
/// - Tokens are shared by every process on the store and survive reopening.
/// - ``currentHistoryToken()`` is cheap: observers poll it.
///
/// ```swift
/// let start = try engine.currentHistoryToken()
/// try engine.commit(changes)
/// let appended = try engine.history(after: start, limit: nil)
/// try engine.setHistoryCursor("indexer", to: appended.last?.token)
/// ```
public protocol HistoryStore: StorageEngine {
    /// The token of the last committed history transaction, 0 when there is none yet. Cheap
    /// enough to poll a few hundred times a second.
    /// - Throws: `.misuse` after `close()`; the engine's typed errors.
    func currentHistoryToken() throws -> Int64

    /// The history transactions after `token`, oldest first, at most `limit` (nil: all).
    /// - Throws: `.misuse` for a negative limit; `.storeCorrupt` for a history entry that does
    ///   not decode; the engine's typed errors.
    func history(after token: Int64, limit: Int?) throws -> [HistoryTransaction]

    /// Every named cursor of the store: name → the last token that consumer has processed.
    ///
    /// ```swift
    /// let behind = try engine.historyCursors().filter { $0.value < current }
    /// ```
    /// - Throws: `.storeCorrupt` for a cursor entry that does not decode; the engine's typed errors.
    func historyCursors() throws -> [String: Int64]

    /// Registers or moves the cursor `name` to `token` (the last token its consumer has
    /// processed), or removes it when `token` is nil; removing a missing cursor does nothing.
    ///
    /// ```swift
    /// try engine.setHistoryCursor("search-index", to: 0)  // register before reading anything
    /// try engine.setHistoryCursor("search-index", to: nil)  // unregister
    /// ```
    /// - Throws: `.misuse` for a name that is empty or longer than
    ///   ``HistoryCursor/maximumNameBytes`` UTF-8 bytes, or a negative token; the engine's typed
    ///   errors (`.busy` when the store's writer is held too long).
    func setHistoryCursor(_ name: String, to token: Int64?) throws

    /// Deletes the history transactions with a token below a bound, and returns the bound: `token`
    /// when `force` is set or no cursor is registered, else the smaller of `token` and the
    /// slowest cursor's token + 1, so no consumer loses a transaction it has not processed; never
    /// more than the next commit's token (the last token + 1), where the history then starts. The
    /// cursors and the last token are read in the same write transaction as the delete.
    ///
    /// ```swift
    /// let bound = try engine.deleteHistory(before: lastWeek, force: false)
    /// // Every transaction before `bound` is gone; none a registered cursor still needs.
    /// ```
    /// - Throws: the engine's typed errors (`.busy` when the store's writer is held too long).
    @discardableResult
    func deleteHistory(before token: Int64, force: Bool) throws -> Int64
}

/// The rules of history cursors that every engine applies: what a name and a token may be, and
/// where trimming stops.
///
/// ```swift
/// try HistoryCursor.check("search-index", token: 42)  // fine
/// try HistoryCursor.check("", token: 42)              // .misuse
/// HistoryCursor.trimmingBound(100, force: false, slowestCursor: 41)  // 42
/// ```
public enum HistoryCursor {
    /// The longest name, in UTF-8 bytes.
    public static let maximumNameBytes = 256

    /// Checks a cursor's name and (when not nil) its token.
    /// - Throws: `.misuse` for an empty name, a name longer than ``maximumNameBytes`` UTF-8 bytes, or a
    ///   negative token.
    public static func check(_ name: String, token: Int64?) throws(StrataError) {
        let bytes = name.utf8.count
        guard bytes > 0, bytes <= maximumNameBytes else {
            throw .misuse(
                "a history cursor needs a name of 1 to \(maximumNameBytes) UTF-8 bytes; "
                    + "\(String(reflecting: String(name.prefix(40)))) has \(bytes)")
        }
        if let token, token < 0 {
            throw .misuse(
                "history cursor \(String(reflecting: name)) cannot move to token \(token): "
                    + "tokens are 0 (nothing processed) or more")
        }
    }

    /// The bound of `deleteHistory(before: token, force:)`: `token` when forced or when there is no
    /// cursor (`slowestCursor` nil), else the smaller of `token` and `slowestCursor + 1`.
    public static func trimmingBound(_ token: Int64, force: Bool, slowestCursor: Int64?) -> Int64 {
        guard !force, let slowest = slowestCursor else { return token }
        let (next, overflow) = slowest.addingReportingOverflow(1)
        return overflow ? token : min(token, next)
    }
}

extension ChangeSet {
    /// Whether the change set writes data: an insert, update, touch, delete, link or unlink
    /// (``verifies`` only check).
    ///
    /// ```swift
    /// var changes = ChangeSet()
    /// changes.verifies = [RowVersionCheck(entity: 0, key: 7, expectedVersion: 3)]
    /// changes.writesData  // false
    /// ```
    public var writesData: Bool {
        !(inserts.isEmpty && updates.isEmpty && touches.isEmpty && deletes.isEmpty && links.isEmpty
            && unlinks.isEmpty)
    }

    /// The history an engine appends for this change set: ``history`` when it writes data, nil
    /// otherwise (a change set that writes nothing commits nothing, so it has no history).
    ///
    /// ```swift
    /// if let record = changes.historyToAppend { try appendHistory(record) }
    /// ```
    public var historyToAppend: HistoryRecord? { writesData ? history : nil }
}
