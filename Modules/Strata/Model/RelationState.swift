/// Lazily created per-object relationship state: resolved to-one targets and loaded to-many sets.
///
/// To-one targets behave like `[Int: ManagedObject?]` (``subscript(toOne:)``). Most entities
/// have one or two to-one relationships, so the first two entries live in the object itself
/// and a bulk insert that sets one relationship per object allocates no hash table per object.
///
/// Confined to its object's context, like the object, so its state skips dynamic exclusivity
/// checks (every relationship read and write goes through it).
final class RelationState {
    @exclusivity(unchecked) private var firstProperty = -1
    @exclusivity(unchecked) private var firstTarget: ManagedObject?
    @exclusivity(unchecked) private var secondProperty = -1
    @exclusivity(unchecked) private var secondTarget: ManagedObject?
    @exclusivity(unchecked) private var overflow: [Int: ManagedObject?] = [:]
    /// Property → loaded to-many set.
    @exclusivity(unchecked) var toMany: [Int: RelatedSet] = [:]

    /// The cached target of to-one `property`: nil when not resolved, `.some(nil)` when
    /// resolved to no object. Assigning nil forgets the entry.
    subscript(toOne property: Int) -> ManagedObject?? {
        get {
            if firstProperty == property { return .some(firstTarget) }
            if secondProperty == property { return .some(secondTarget) }
            return overflow.isEmpty ? nil : overflow[property]
        }
        set {
            if firstProperty == property || (firstProperty < 0 && newValue != nil && !holds(property)) {
                firstProperty = newValue == nil ? -1 : property
                firstTarget = newValue ?? nil
            } else if secondProperty == property || (secondProperty < 0 && newValue != nil && !holds(property)) {
                secondProperty = newValue == nil ? -1 : property
                secondTarget = newValue ?? nil
            } else {
                overflow[property] = newValue
            }
        }
    }

    private func holds(_ property: Int) -> Bool {
        firstProperty == property || secondProperty == property || (!overflow.isEmpty && overflow[property] != nil)
    }

    /// Calls `body` with every cached to-one (property, target) pair.
    func forEachToOne(_ body: (Int, ManagedObject?) throws -> Void) rethrows {
        if firstProperty >= 0 { try body(firstProperty, firstTarget) }
        if secondProperty >= 0 { try body(secondProperty, secondTarget) }
        for (property, target) in overflow { try body(property, target) }
    }
}

/// A loaded to-many relationship: members in order, plus their identities.
///
/// Confined to its owner's context, so it skips dynamic exclusivity checks like ``RelationState``.
final class RelatedSet {
    @exclusivity(unchecked) var members: [ManagedObject]
    @exclusivity(unchecked) var identities: Set<ObjectIdentifier>

    init(_ members: [ManagedObject]) {
        self.members = members
        self.identities = Set(members.map(ObjectIdentifier.init))
    }

    func insert(_ object: ManagedObject) {
        if identities.insert(ObjectIdentifier(object)).inserted { members.append(object) }
    }

    func remove(_ object: ManagedObject) {
        if identities.remove(ObjectIdentifier(object)) != nil { members.removeAll { $0 === object } }
    }

    func contains(_ object: ManagedObject) -> Bool { identities.contains(ObjectIdentifier(object)) }
}
