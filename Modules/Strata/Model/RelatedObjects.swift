public import StrataStorage
/// The objects at the far end of a to-many relationship: a set you can add to and remove from.
///
/// Both sides stay in sync at once: `account.transactions.insert(t)` sets `t.account` to
/// `account`, and `t.account = other` removes `t` from `account.transactions`.
///
/// ```swift
/// try await context.perform {
///     let account = try context.existingObject(with: accountID, as: Account.self)
///     for transaction in account.transactions { total += transaction.amount }
///     account.transactions.insert(Transaction(context: context))
///     try context.save()
/// }
/// ```
///
/// Lifetime rule: valid only inside the owning context's `perform`; do not store it.
/// Iteration order is primary-key order for saved objects, then insertion order.
public struct RelatedObjects<Target: ManagedObject>: Sequence {
    let owner: ManagedObject
    let property: Int

    init(owner: ManagedObject, property: Int) {
        self.owner = owner
        self.property = property
    }

    /// The related objects, loading them from the store on first access.
    public var allObjects: [Target] {
        owner.toManyMembers(property).map { $0 as! Target }
    }

    /// How many objects are related.
    public var count: Int { owner.toManyMembers(property).count }

    /// Whether no object is related.
    public var isEmpty: Bool { count == 0 }

    /// Whether `object` is related.
    public func contains(_ object: Target) -> Bool {
        owner.toManyContains(property, object)
    }

    /// Relates `object`, updating its inverse relationship. No effect if already related.
    public func insert(_ object: Target) {
        owner.toManyInsert(property, object)
    }

    /// Unrelates `object`, updating its inverse relationship. No effect if not related.
    public func remove(_ object: Target) {
        owner.toManyRemove(property, object)
    }

    public func makeIterator() -> IndexingIterator<[Target]> {
        allObjects.makeIterator()
    }
}

extension RelatedObjects: RelationshipValue {
    /// A to-many relationship projects its members' IDs.
    public typealias Projection = [ObjectID]
    /// To-many.
    public static var isToMany: Bool { true }

    /// Implementation detail of ``Relationship``.
    public static func _read(owner: ManagedObject, property: Int) -> RelatedObjects<Target> {
        RelatedObjects(owner: owner, property: property)
    }

    /// Assigning a `RelatedObjects` replaces the membership with the assigned one's objects.
    public static func _write(_ value: RelatedObjects<Target>, owner: ManagedObject, property: Int) {
        owner.replaceToMany(property, with: value.allObjects)
    }

    /// Implementation detail of ``Relationship``.
    public static func _project(owner: ManagedObject, property: Int) -> [ObjectID] {
        owner.toManyMembers(property).map(\.objectID)
    }
}
