public import StrataStorage

/// The objects at the far end of a to-many relationship: a collection of distinct objects you
/// can add to and remove from, with `Set`'s operations.
///
/// Both sides stay in sync at once: `account.transactions.insert(t)` sets `t.account` to
/// `account`, and `t.account = other` removes `t` from `account.transactions`.
///
/// ```swift
/// try await context.perform {
///     let account = try context.existingObject(with: accountID, as: Account.self)
///     for transaction in account.transactions { total += transaction.amount }
///     let (inserted, _) = account.transactions.insert(Transaction(context: context))
///     account.transactions.subtract(stale)      // any sequence of transactions
///     try context.save()
/// }
/// ```
///
/// It is a view of the relationship, not a copy: the mutating operations (``insert(_:)``,
/// ``remove(_:)``, ``formUnion(_:)``, ``subtract(_:)``, ``removeAll()``) change the relationship
/// itself, so they work on the value the property returns (`account.transactions.insert(t)`),
/// and assigning a `RelatedObjects` to the property replaces the membership.
///
/// Order: primary-key order for saved objects, then insertion order. Objects deleted in the
/// context (and not saved yet) are skipped.
///
/// Lifetime rule: valid only inside the owning context's `perform`; do not store it. An index
/// is valid for one read: until the relationship or the membership of any of its objects
/// changes (an insert, a remove, a change of an inverse, a deletion, a save, a rollback, a
/// merge). Iteration sees the members as they were when it started.
public struct RelatedObjects<Target: ManagedObject>: Collection {
    let owner: ManagedObject
    let property: Int

    @usableFromInline
    init(owner: ManagedObject, property: Int) {
        self.owner = owner
        self.property = property
    }

    /// The loaded members, deleted ones included (the indices run over these).
    private var storage: [ManagedObject] { owner.toManyStorage(property) }

    // MARK: Collection

    /// A position in the relationship, valid for one read (see the lifetime rule).
    public typealias Index = Int

    /// The position of the first object, loading the relationship on first access.
    public var startIndex: Int { Self.live(storage, from: 0) }

    /// The position after the last object.
    public var endIndex: Int { storage.count }

    /// The position after `i`.
    public func index(after i: Int) -> Int { Self.live(storage, from: i + 1) }

    /// The object at `position`.
    ///
    /// - Precondition: `position` is a valid index of this read (a stale index traps, as
    ///   an array's does).
    public subscript(position: Int) -> Target {
        owner.checkedMember(storage[position], of: property, as: Target.self)
    }

    /// The first position at or after `start` whose object is not deleted, or `members.count`.
    private static func live(_ members: [ManagedObject], from start: Int) -> Int {
        var index = start
        while index < members.count, members[index].state.contains(.deleted) { index += 1 }
        return index
    }

    /// Iterates over the members as they were when iteration started.
    public struct Iterator: IteratorProtocol {
        let owner: ManagedObject
        let property: Int
        let members: [ManagedObject]
        var position = 0

        /// The next related object, or nil at the end.
        public mutating func next() -> Target? {
            while position < members.count {
                let member = members[position]
                position += 1
                if !member.state.contains(.deleted) {
                    return owner.checkedMember(member, of: property, as: Target.self)
                }
            }
            return nil
        }
    }

    /// An iterator over the related objects, loading them from the store on first access.
    public func makeIterator() -> Iterator {
        Iterator(owner: owner, property: property, members: storage)
    }

    /// How many objects are related.
    public var count: Int {
        storage.reduce(0) { $1.state.contains(.deleted) ? $0 : $0 + 1 }
    }

    /// Whether no object is related.
    public var isEmpty: Bool { startIndex == endIndex }

    /// The related objects as an array, loading them from the store on first access.
    public var allObjects: [Target] { Array(self) }

    // MARK: Set operations

    /// Whether `member` is related (a hash lookup, not a scan).
    public func contains(_ member: Target) -> Bool {
        owner.toManyContains(property, member)
    }

    /// Relates `newMember`, updating its inverse relationship.
    ///
    /// ```swift
    /// let (inserted, _) = account.transactions.insert(transaction)
    /// ```
    /// - Returns: like `Set.insert(_:)`, `(true, newMember)` when it was not related before,
    ///   and `(false, newMember)` when it already was (nothing changes then).
    /// - Precondition: `newMember` belongs to the owner's context (anything else stops the
    ///   program with a message naming the relationship).
    @discardableResult
    public func insert(_ newMember: Target) -> (inserted: Bool, memberAfterInsert: Target) {
        (owner.toManyInsert(property, newMember), newMember)
    }

    /// Unrelates `member`, updating its inverse relationship.
    ///
    /// - Returns: like `Set.remove(_:)`, `member` when it was related, and nil when it was
    ///   not (nothing changes then). A member deleted in this context is no longer related, as
    ///   ``contains(_:)`` and ``count`` say: removing it returns nil.
    /// - Precondition: `member` belongs to the owner's context.
    @discardableResult
    public func remove(_ member: Target) -> Target? {
        let wasRelated = contains(member)
        // Still unlinked when deleted, so that the deleted object's inverse no longer names the owner.
        owner.toManyRemove(property, member)
        return wasRelated ? member : nil
    }

    /// Relates every object of `other` that is not related yet, updating each one's inverse.
    ///
    /// ```swift
    /// tag.entries.formUnion(try context.fetch(FetchRequest<Entry>(predicate: recent)))
    /// ```
    /// - Precondition: every object of `other` belongs to the owner's context.
    public func formUnion<S: Sequence>(_ other: S) where S.Element == Target {
        for member in other { owner.toManyInsert(property, member) }
    }

    /// Unrelates every object of `other` that is related, updating each one's inverse.
    ///
    /// ```swift
    /// account.transactions.subtract(account.transactions.filter { $0.amount == 0 })
    /// ```
    /// - Precondition: every object of `other` belongs to the owner's context.
    public func subtract<S: Sequence>(_ other: S) where S.Element == Target {
        for member in other { owner.toManyRemove(property, member) }
    }

    /// Unrelates every object, updating each one's inverse relationship.
    public func removeAll() {
        for member in owner.toManyMembers(property) { owner.toManyRemove(property, member) }
    }
}

extension RelatedObjects: RelationshipValue {
    /// A to-many relationship projects its members' IDs.
    public typealias Projection = [ObjectID]

    /// To-many: a view of the relationship; assigning one replaces the membership with its
    /// objects; the projection is the members' IDs.
    @_documentation(visibility: internal)
    @inlinable
    public static var relationshipAccessors: RelationshipAccessors<RelatedObjects<Target>> {
        RelationshipAccessors(
            isToMany: true,
            read: { owner, property in RelatedObjects(owner: owner, property: property) },
            write: { value, owner, property in owner.replaceToMany(property, with: value.untypedMembers) },
            project: { owner, property in owner.toManyMembers(property).map(\.objectID) }
        )
    }

    /// The related objects, untyped (for assignment).
    @usableFromInline
    var untypedMembers: [ManagedObject] { owner.toManyMembers(property) }
}
