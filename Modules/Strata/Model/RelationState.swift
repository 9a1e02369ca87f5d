/// Lazily created per-object relationship state: resolved to-one targets and loaded to-many sets.
final class RelationState {
    /// Property → resolved target (`.some(nil)` when resolved to no object).
    var toOne = ToOneCache()
    var toMany: [Int: RelatedSet] = [:]
}

/// Resolved to-one targets by property, behaving like `[Int: ManagedObject?]`.
///
/// Most entities have one or two to-one relationships, so the first two entries live inline
/// and a bulk insert that sets one relationship per object allocates no hash table per object.
struct ToOneCache {
    private var firstProperty = -1
    private var firstTarget: ManagedObject?
    private var secondProperty = -1
    private var secondTarget: ManagedObject?
    private var overflow: [Int: ManagedObject?] = [:]

    /// The cached target of `property`: nil when not resolved, `.some(nil)` when resolved to none.
    /// Assigning nil forgets the entry.
    subscript(property: Int) -> ManagedObject?? {
        get {
            if firstProperty == property { return .some(firstTarget) }
            if secondProperty == property { return .some(secondTarget) }
            return overflow.isEmpty ? nil : overflow[property]
        }
        set {
            if firstProperty == property || (firstProperty < 0 && newValue != nil && !holds(property)) {
                store(newValue, property, &firstProperty, &firstTarget)
            } else if secondProperty == property || (secondProperty < 0 && newValue != nil && !holds(property)) {
                store(newValue, property, &secondProperty, &secondTarget)
            } else {
                overflow[property] = newValue
            }
        }
    }

    private func holds(_ property: Int) -> Bool {
        firstProperty == property || secondProperty == property || (!overflow.isEmpty && overflow[property] != nil)
    }

    private func store(_ value: ManagedObject??, _ property: Int, _ slotProperty: inout Int, _ slotTarget: inout ManagedObject?) {
        if let value {
            slotProperty = property
            slotTarget = value
        } else {
            slotProperty = -1
            slotTarget = nil
        }
    }

    /// Calls `body` with every cached (property, target) pair.
    func forEach(_ body: (Int, ManagedObject?) throws -> Void) rethrows {
        if firstProperty >= 0 { try body(firstProperty, firstTarget) }
        if secondProperty >= 0 { try body(secondProperty, secondTarget) }
        for (property, target) in overflow { try body(property, target) }
    }
}

/// A loaded to-many relationship: members in order, plus their identities.
final class RelatedSet {
    var members: [ManagedObject]
    var identities: Set<ObjectIdentifier>

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
