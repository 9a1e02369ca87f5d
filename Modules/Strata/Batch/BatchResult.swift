import Foundation

/// What one batch did, known once the save that committed it returns
/// (``ObjectContext/savedBatches``).
///
/// ```swift
/// try context.batchDelete(Transaction.self, where: #Predicate { $0.amount == 0 })
/// try context.save()
/// print(context.savedBatches[0].deletedCount)
/// ```
public struct BatchResult: Sendable, Hashable {
    /// The kind of a batch.
    public enum Kind: String, Sendable, Hashable {
        /// ``ObjectContext/batchInsert(_:from:onConflict:_:)``.
        case insert
        /// ``ObjectContext/batchUpdate(_:where:set:)``.
        case update
        /// ``ObjectContext/batchDelete(_:where:)``.
        case delete
    }

    /// Keys of one entity.
    struct EntityKeys: Sendable, Hashable {
        var entityName: String
        var keys: [Int64]
    }

    /// The kind of batch.
    public let kind: Kind
    /// The entity the batch was issued for.
    public let entityName: String
    let storeIdentifier: UUID
    var inserted: [Int64] = []
    var updated: [EntityKeys] = []
    var deleted: [EntityKeys] = []
    /// The rows of a batch insert that an upsert left alone: `.ignore` found their unique value
    /// taken, or `.update` had nothing to set (no attributes, or the stored row holds their
    /// values already).
    public internal(set) var ignoredCount = 0

    init(kind: Kind, entityName: String, storeIdentifier: UUID) {
        self.kind = kind
        self.entityName = entityName
        self.storeIdentifier = storeIdentifier
    }

    /// How many rows the batch inserted.
    public var insertedCount: Int { inserted.count }
    /// How many rows the batch updated (see ``updatedIDs``).
    public var updatedCount: Int { updated.reduce(0) { $0 + $1.keys.count } }
    /// How many rows the batch deleted, the cascaded rows of other entities included.
    public var deletedCount: Int { deleted.reduce(0) { $0 + $1.keys.count } }

    /// The rows the batch inserted, in the order of the batch's elements.
    public var insertedIDs: [ObjectID] {
        inserted.map { ObjectID(storeIdentifier: storeIdentifier, entityName: entityName, primaryKey: $0) }
    }
    /// The rows the batch updated: the selected rows of an update, the existing rows an upsert
    /// updated, and the rows whose links a delete's nullify rules cleared.
    public var updatedIDs: [ObjectID] { ids(updated) }
    /// The rows the batch deleted, the cascaded rows of other entities included.
    public var deletedIDs: [ObjectID] { ids(deleted) }

    private func ids(_ groups: [EntityKeys]) -> [ObjectID] {
        groups.flatMap { group in
            group.keys.map {
                ObjectID(storeIdentifier: storeIdentifier, entityName: group.entityName, primaryKey: $0)
            }
        }
    }

    mutating func note(_ key: Int64, entity: String, in list: WritableKeyPath<BatchResult, [EntityKeys]>) {
        if let last = self[keyPath: list].indices.last, self[keyPath: list][last].entityName == entity {
            self[keyPath: list][last].keys.append(key)
        } else {
            self[keyPath: list].append(EntityKeys(entityName: entity, keys: [key]))
        }
    }
}

extension ObjectContext {
    /// What the batches of this context's last successful ``save()`` did, one ``BatchResult`` per
    /// batch in the order they were staged (empty when that save had none, or before any save).
    ///
    /// ```swift
    /// try context.batchDelete(Transaction.self, where: #Predicate { $0.amount == 0 })
    /// try context.save()
    /// let removed = context.savedBatches[0].deletedCount
    /// ```
    public var savedBatches: [BatchResult] {
        requireInside("ObjectContext.savedBatches")
        return lastBatchResults
    }
}
