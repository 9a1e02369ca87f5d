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
