import StrataStorage

/// What an object needs only once it is inserted, changed, detached or linked, kept apart from
/// the object so that a fetched, unchanged object (the most common kind by far) carries none of
/// it: resolved to-one targets and loaded to-many sets, the values as they were before the first
/// change, the owner of values kept outside the context's arena, and the temporary serial of an
/// inserted object. Made on the first need (``ManagedObject/madeSideState``).
///
/// To-one targets behave like `[Int: ManagedObject?]` (``subscript(toOne:)``). Most entities
/// have one or two to-one relationships, so the first two entries live in the state itself
/// and a bulk insert that sets one relationship per object allocates no hash table per object.
///
/// Walled file (see "Unsafe code" in `Docs/Architecture.md`): the state's storage skips dynamic
/// exclusivity checks, because every relationship read and write goes through it and the check
/// (a runtime call per access) can find nothing: the state is confined to its object's context,
/// whose thread every caller has checked (`ManagedObject.checkAccess`), and it is reached only
/// through the accessors below, one access at a time.
final class ObjectSideState {
    @exclusivity(unchecked) private var _committedValues: ContiguousArray<StoredValue>?
    @exclusivity(unchecked) private var _detachedValues: DetachedValues?
    @exclusivity(unchecked) private var _temporarySerial: UInt64 = 0
    @exclusivity(unchecked) private var _firstProperty = -1
    @exclusivity(unchecked) private var _firstTarget: ManagedObject?
    @exclusivity(unchecked) private var _secondProperty = -1
    @exclusivity(unchecked) private var _secondTarget: ManagedObject?
    @exclusivity(unchecked) private var _overflow: [Int: ManagedObject?] = [:]
    @exclusivity(unchecked) private var _toMany = ToManySets()

    /// The object's values as last loaded or saved, kept from its first change until save or
    /// rollback (see ``ManagedObject/committedValues``).
    var committedValues: ContiguousArray<StoredValue>? {
        @inline(__always) get { unsafe _committedValues }
        @inline(__always) _modify { yield &(unsafe _committedValues) }
    }
    /// The owner of the object's value slots when they are not in its context's arena (see
    /// ``ManagedObject/detachedValues``).
    var detachedValues: DetachedValues? {
        @inline(__always) get { unsafe _detachedValues }
        @inline(__always) _modify { yield &(unsafe _detachedValues) }
    }
    /// The serial of the object's temporary ID (an inserted object's; 0 for a fetched one).
    var temporarySerial: UInt64 {
        @inline(__always) get { unsafe _temporarySerial }
        @inline(__always) _modify { yield &(unsafe _temporarySerial) }
    }

    private var firstProperty: Int {
        @inline(__always) get { unsafe _firstProperty }
        @inline(__always) _modify { yield &(unsafe _firstProperty) }
    }
    private var firstTarget: ManagedObject? {
        @inline(__always) get { unsafe _firstTarget }
        @inline(__always) _modify { yield &(unsafe _firstTarget) }
    }
    private var secondProperty: Int {
        @inline(__always) get { unsafe _secondProperty }
        @inline(__always) _modify { yield &(unsafe _secondProperty) }
    }
    private var secondTarget: ManagedObject? {
        @inline(__always) get { unsafe _secondTarget }
        @inline(__always) _modify { yield &(unsafe _secondTarget) }
    }
    private var overflow: [Int: ManagedObject?] {
        @inline(__always) get { unsafe _overflow }
        @inline(__always) _modify { yield &(unsafe _overflow) }
    }
    /// Property → loaded to-many set.
    var toMany: ToManySets {
        @inline(__always) get { unsafe _toMany }
        @inline(__always) _modify { yield &(unsafe _toMany) }
    }

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

    /// Forgets every resolved to-one target and loaded to-many set, to be read again from the
    /// store; the rest of the state stays.
    func forgetRelationships() {
        firstProperty = -1
        firstTarget = nil
        secondProperty = -1
        secondTarget = nil
        if !overflow.isEmpty { overflow = [:] }
        toMany = ToManySets()
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

/// An object's loaded to-many sets by property. Most objects load one to-many relationship, so
/// the first lives inline and a batch fault over thousands of owners allocates no hash table per
/// owner; further ones go to a dictionary.
struct ToManySets {
    private var firstProperty = -1
    private var first: RelatedSet?
    private var overflow: [Int: RelatedSet] = [:]

    /// The loaded set of `property`, or nil; assigning nil forgets it.
    subscript(property: Int) -> RelatedSet? {
        get {
            if firstProperty == property { return first }
            return overflow.isEmpty ? nil : overflow[property]
        }
        set {
            if firstProperty == property {
                first = newValue
                if newValue == nil { firstProperty = -1 }
            } else if firstProperty < 0 && newValue != nil && (overflow.isEmpty || overflow[property] == nil) {
                firstProperty = property
                first = newValue
            } else {
                overflow[property] = newValue
            }
        }
    }
}

/// A loaded to-many relationship: members in order, plus their identities.
///
/// Confined to its owner's context and exempt from dynamic exclusivity checks, like
/// ``ObjectSideState``.
final class RelatedSet {
    @exclusivity(unchecked) private var _members: [ManagedObject]
    /// Built on the first `insert`, `remove` or `contains`: a set that is only iterated (most
    /// faults) never hashes its members.
    @exclusivity(unchecked) private var _identities: Set<ObjectIdentifier>?

    init(_ members: [ManagedObject]) {
        unsafe _members = members
    }

    /// The members, in order.
    var members: [ManagedObject] {
        @inline(__always) get { unsafe _members }
        @inline(__always) _modify { yield &(unsafe _members) }
    }
    /// The members' identities.
    var identities: Set<ObjectIdentifier> {
        get {
            if let built = unsafe _identities { return built }
            let built = Set(members.lazy.map(ObjectIdentifier.init))
            unsafe _identities = built
            return built
        }
        _modify {
            if unsafe _identities == nil { unsafe _identities = Set(members.lazy.map(ObjectIdentifier.init)) }
            yield &(unsafe _identities)!
        }
    }

    func insert(_ object: ManagedObject) {
        if identities.insert(ObjectIdentifier(object)).inserted { members.append(object) }
    }

    func remove(_ object: ManagedObject) {
        if identities.remove(ObjectIdentifier(object)) != nil { members.removeAll { $0 === object } }
    }

    func contains(_ object: ManagedObject) -> Bool { identities.contains(ObjectIdentifier(object)) }
}
