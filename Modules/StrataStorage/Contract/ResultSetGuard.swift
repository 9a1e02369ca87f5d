public import Foundation

/// A guarded predicate read (``ChangeSet/resultGuards``): the rows of one entity that match a
/// filter must be, at commit, exactly the rows the saving context saw, each at the version it saw.
///
/// A version check (``ChangeSet/verifies``) covers a row that exists; a guard covers a *set*,
/// including the rows that do not exist yet. "Insert an admin only if there is none" guards the
/// empty set of admins: if another writer committed an admin meanwhile, the set is no longer
/// empty and the commit conflicts. The core fills it from
/// `ObjectContext.requireUnchangedResults(of:)`.
///
/// ```swift
/// // Insert member 9 as the admin of org 4 only if org 4 still has no admin (columns: org, role).
/// let admins = Filter.and([
///     .compare(column: 0, .equal, .integer(4)), .compare(column: 1, .equal, .text("admin")),
/// ])
/// var changes = ChangeSet()
/// changes.inserts = [RowWrite(entity: 0, key: 9, expectedVersion: 0, values: [.integer(4), .text("admin")])]
/// changes.resultGuards = [ResultSetGuard(entity: 0, filter: admins, expected: [:])]
/// try engine.commit(changes)  // .conflict naming the admin that appeared; nothing written
/// ```
///
/// What an engine does with it is stated in ``StorageEngine/commit(_:)``: select the rows
/// matching ``filter`` inside the commit's transaction, before writing anything, with the
/// reference semantics of ``Filter``, and compare their keys and versions with ``expected``
/// (``conflicts(found:storeIdentifier:entityName:)`` does the comparison).
public struct ResultSetGuard: Sendable, Hashable {
    /// The entity number.
    public var entity: Int
    /// Which rows of the entity are guarded; nil for all of them.
    public var filter: Filter?
    /// The rows the context saw matching ``filter``: primary key → version.
    public var expected: [Int64: Int64]

    /// A guard on the rows of `entity` matching `filter`, expected to be exactly `expected`.
    public init(entity: Int, filter: Filter?, expected: [Int64: Int64]) {
        self.entity = entity
        self.filter = filter
        self.expected = expected
    }

    /// The plan that selects the guarded rows (any order: only keys and versions are compared).
    public var plan: FetchPlan { FetchPlan(entity: entity, filter: filter, inKeyOrder: false) }

    /// The differences between the rows found matching ``filter`` now (key → version) and
    /// ``expected``, as conflicts ordered by key: a row that appeared has `expectedVersion` 0 and
    /// its stored version; a row that vanished (deleted, or no longer matching) has its expected
    /// version and `storedVersion` nil; a row that changed and still matches has both. Empty when
    /// the sets agree.
    ///
    /// ```swift
    /// var found: [Int64: Int64] = [:]
    /// try reader.forEachRow(for: guarded.plan) { found[$0.key] = $0.version }
    /// let stale = guarded.conflicts(found: found, storeIdentifier: storeIdentifier, entityName: "Member")
    /// ```
    public func conflicts(found: [Int64: Int64], storeIdentifier: UUID, entityName: String) -> [VersionConflict] {
        var keys = Set(found.keys)
        keys.formUnion(expected.keys)
        return keys.sorted().compactMap { key in
            let now = found[key]
            let then = expected[key]
            guard now != then else { return nil }
            return VersionConflict(
                objectID: ObjectID(storeIdentifier: storeIdentifier, entityName: entityName, primaryKey: key),
                expectedVersion: then ?? 0, storedVersion: now)
        }
    }

    /// Runs the guard on `reader` (a reader over the commit's own transaction) and returns its
    /// conflicts (``conflicts(found:storeIdentifier:entityName:)``); the reference way for an
    /// engine to check a guard. An expected row that no longer matches but still exists is
    /// listed with its stored version (it changed), so a nil stored version means deleted.
    /// - Throws: the reader's errors.
    public func check(
        with reader: some StoreReader, storeIdentifier: UUID, entityName: String
    ) throws -> [VersionConflict] {
        var found: [Int64: Int64] = [:]
        found.reserveCapacity(expected.count)
        try reader.forEachRow(for: plan) { found[$0.key] = $0.version }
        var conflicts = conflicts(found: found, storeIdentifier: storeIdentifier, entityName: entityName)
        for index in conflicts.indices where conflicts[index].storedVersion == nil {
            guard let key = conflicts[index].objectID.primaryKey else { continue }
            conflicts[index].storedVersion = try reader.row(entity: entity, key: key)?.version
        }
        return conflicts
    }
}
