public import Foundation
import StrataStorage

/// One committed save, as the store's persistent history keeps it: who saved, when, and what
/// changed. A `Sendable` value, safe to pass anywhere.
///
/// History is appended in the same engine transaction as the data, so a transaction exists
/// exactly when its save committed. Read them with ``PersistentContainer/history(after:entities:authors:limit:)``
/// or observe them with ``PersistentContainer/changes(after:entities:)``.
///
/// ```swift
/// for transaction in try await container.history(after: saved) {
///     for change in transaction.changes where change.kind == .delete {
///         print("deleted", change.objectID.uriRepresentation, "by", transaction.author ?? "?")
///     }
/// }
/// ```
public struct PersistentHistoryTransaction: Sendable, Hashable {
    /// The transaction's position in the history.
    public let token: HistoryToken
    /// When it committed.
    public let timestamp: Date
    /// Who committed: the saving context's ``ObjectContext/transactionAuthor``, else its name; nil
    /// when it had neither.
    public let author: String?
    /// What changed, one entry per object.
    public let changes: [PersistentHistoryChange]

    /// A transaction (for tests and adapters; the container builds them from the store).
    public init(token: HistoryToken, timestamp: Date, author: String?, changes: [PersistentHistoryChange]) {
        self.token = token
        self.timestamp = timestamp
        self.author = author
        self.changes = changes
    }
}

/// What one save did to one object.
///
/// ```swift
/// if change.kind == .update, change.changedProperties.contains("balance") { refresh(change.objectID) }
/// ```
public struct PersistentHistoryChange: Sendable, Hashable {
    /// The kind of change.
    public enum Kind: String, Sendable, Hashable {
        /// The object was inserted.
        case insert
        /// Some of its attributes or relationships changed.
        case update
        /// The object was deleted.
        case delete
    }

    /// The object (a permanent ID; its `uriRepresentation` is a string to keep).
    public let objectID: ObjectID
    /// Insert, update or delete.
    public let kind: Kind
    /// The names of the attributes and relationships the save changed: every one for an insert,
    /// none for a delete.
    public let changedProperties: Set<String>
    /// For a delete: the last values of the attributes marked
    /// ``AttributeOptions/preserveAfterDeletion``, by attribute name. Empty otherwise. Read one,
    /// typed, with ``tombstoneValue(_:as:)``.
    public let tombstone: [String: TombstoneValue]

    /// A change (for tests and adapters).
    public init(
        objectID: ObjectID, kind: Kind, changedProperties: Set<String>, tombstone: [String: TombstoneValue] = [:]
    ) {
        self.objectID = objectID
        self.kind = kind
        self.changedProperties = changedProperties
        self.tombstone = tombstone
    }

    /// The tombstone value of `attribute`, converted to `type`; nil when the tombstone has no such
    /// attribute or its value is not a `type`.
    ///
    /// ```swift
    /// let name = change.tombstoneValue("name", as: String.self)
    /// ```
    public func tombstoneValue<Value: AttributeValue>(_ attribute: String, as type: Value.Type) -> Value? {
        guard let value = tombstone[attribute] else { return nil }
        return Value(storedValue: value.storedValue)
    }
}

/// A value kept in a deleted object's tombstone: the attribute's stored form.
///
/// ```swift
/// if case .text(let name) = change.tombstone["name"] { print("deleted", name) }
/// ```
public enum TombstoneValue: Sendable, Hashable, CustomStringConvertible {
    /// No value (an optional attribute that was nil).
    case null
    /// An integer, a Boolean or a date's stored form.
    case integer(Int64)
    /// A floating-point number.
    case real(Double)
    /// A text.
    case text(String)
    /// Bytes (data, UUIDs, codable values).
    case blob(Data)

    init(_ value: StoredValue) {
        switch value {
        case .null: self = .null
        case .integer(let v): self = .integer(v)
        case .real(let v): self = .real(v)
        case .text(let v): self = .text(v)
        case .blob(let v): self = .blob(v)
        }
    }

    var storedValue: StoredValue {
        switch self {
        case .null: .null
        case .integer(let v): .integer(v)
        case .real(let v): .real(v)
        case .text(let v): .text(v)
        case .blob(let v): .blob(v)
        }
    }

    public var description: String { RecordedValue(storedValue).description }
}
