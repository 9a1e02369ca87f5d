/// A context's identity map and change-tracking lists: the per-object state that every
/// fetched, looked-up, inserted or changed object goes through.
///
/// Walled file (see "Unsafe code" in `Docs/Architecture.md`). The storage skips dynamic
/// exclusivity checks: the runtime check would cost each object one or more calls
/// (`swift_beginAccess`, about 75 instructions each) that can find nothing, because
/// 1. only the thread running the context's `perform` touches it (every API that reaches it
///    checks confinement first: `checkInside`, `requireInside`, `ManagedObject.checkAccess`), and
/// 2. it is reached only through the accessors below, each one access at a time: no caller holds
///    an `inout` access to one list while it calls code that touches the same list.
/// ``ObjectContext`` forwards its `registry`, `inserted`, `updated`, `deleted`, `touched`,
/// `relationDirty` and `temporaries` here; fetch groups go through ``fetchGroup(of:)``,
/// ``setFetchGroup(_:of:)`` and ``removeFetchGroups()``, and ``removeRegisteredObjects()`` empties
/// the identity maps.
final class ContextObjects {
    @exclusivity(unchecked) private var _registry: [IdentityMap]
    @exclusivity(unchecked) private var _inserted: [ManagedObject] = []
    @exclusivity(unchecked) private var _updated: [ManagedObject] = []
    @exclusivity(unchecked) private var _deleted: [ManagedObject] = []
    @exclusivity(unchecked) private var _touched: [ManagedObject] = []
    @exclusivity(unchecked) private var _relationDirty: [ManagedObject] = []
    @exclusivity(unchecked) private var _temporaries: TemporaryMap = [:]
    /// Empty until the first fetch group is set (most contexts never make one), then one per
    /// entity, as many as `_registry` has.
    @exclusivity(unchecked) private var _fetchGroups: [FetchGroup?] = []
    /// The entities of the objects in `inserted`, `updated`, `deleted` and `relationDirty`, as far
    /// as `_scanned` counts: the lists only grow by appending, so each call of
    /// ``hasChanges(to:)`` reads only what was appended since the last one.
    @exclusivity(unchecked) private var _changedModels: Set<ObjectIdentifier> = []
    /// How many objects of each list (`inserted`, `updated`, `deleted`, `relationDirty`) are in
    /// `_changedModels`.
    @exclusivity(unchecked) private var _scanned = [0, 0, 0, 0]
    /// Set when one of those lists lost objects: `_changedModels` is then rebuilt from scratch.
    @exclusivity(unchecked) private var _changedModelsStale = false

    /// Empty state for a schema of `entityCount` entities.
    ///
    /// Made for every context, so made cheaply: `Array(repeating:count:)` of a non-trivial
    /// element allocates through the standard library's unspecialized path, which looks up the
    /// storage class's generic metadata at run time (about 700 instructions a call); reserving
    /// and appending stays in specialized code.
    init(entityCount: Int) {
        var registry: [IdentityMap] = []
        registry.reserveCapacity(entityCount)
        for _ in 0..<entityCount { registry.append(IdentityMap()) }
        unsafe _registry = registry
    }

    /// Whether objects of `model` are inserted, updated, deleted or have changed to-one
    /// relationships. Each call reads only the objects appended to the lists since the last one
    /// (all of them again only after a list lost objects), so a loop of relationship faults while
    /// the lists grow, such as a cascade of deletes, stays linear instead of scanning them per fault.
    func hasChanges(to model: EntityModel) -> Bool {
        if inserted.isEmpty && updated.isEmpty && deleted.isEmpty && relationDirty.isEmpty { return false }
        if unsafe _changedModelsStale {
            unsafe _changedModels = []
            unsafe _scanned = [0, 0, 0, 0]
            unsafe _changedModelsStale = false
        }
        scanAppended(inserted, list: 0)
        scanAppended(updated, list: 1)
        scanAppended(deleted, list: 2)
        scanAppended(relationDirty, list: 3)
        return unsafe _changedModels.contains(ObjectIdentifier(model))
    }

    /// Adds the entities of the objects appended to `objects` (list number `list`) since the last scan.
    private func scanAppended(_ objects: [ManagedObject], list: Int) {
        let scanned = unsafe _scanned[list]
        guard objects.count > scanned else { return }
        for object in objects[scanned...] {
            if let model = object.model { unsafe _changedModels.insert(ObjectIdentifier(model)) }
        }
        unsafe _scanned[list] = objects.count
    }

    /// The identity map: per entity number, the one instance of each row the context holds.
    var registry: [IdentityMap] {
        @inline(__always) get { unsafe _registry }
        @inline(__always) _modify { yield &(unsafe _registry) }
    }
    /// Objects inserted since the last save.
    var inserted: [ManagedObject] {
        @inline(__always) get { unsafe _inserted }
        @inline(__always) _modify {
            let before = unsafe _inserted.count
            defer { if unsafe _inserted.count < before { unsafe _changedModelsStale = true } }
            yield &(unsafe _inserted)
        }
    }
    /// Saved objects whose attributes changed since the last save.
    var updated: [ManagedObject] {
        @inline(__always) get { unsafe _updated }
        @inline(__always) _modify {
            let before = unsafe _updated.count
            defer { if unsafe _updated.count < before { unsafe _changedModelsStale = true } }
            yield &(unsafe _updated)
        }
    }
    /// Objects marked for deletion.
    var deleted: [ManagedObject] {
        @inline(__always) get { unsafe _deleted }
        @inline(__always) _modify {
            let before = unsafe _deleted.count
            defer { if unsafe _deleted.count < before { unsafe _changedModelsStale = true } }
            yield &(unsafe _deleted)
        }
    }
    /// Saved objects whose to-many relationships changed (their version is bumped at save).
    var touched: [ManagedObject] {
        @inline(__always) get { unsafe _touched }
        @inline(__always) _modify { yield &(unsafe _touched) }
    }
    /// Objects whose to-one relationships changed in memory since the last save.
    var relationDirty: [ManagedObject] {
        @inline(__always) get { unsafe _relationDirty }
        @inline(__always) _modify {
            let before = unsafe _relationDirty.count
            defer { if unsafe _relationDirty.count < before { unsafe _changedModelsStale = true } }
            yield &(unsafe _relationDirty)
        }
    }
    /// Inserted objects by temporary serial.
    var temporaries: TemporaryMap {
        @inline(__always) get { unsafe _temporaries }
        @inline(__always) _modify { yield &(unsafe _temporaries) }
    }
    /// The objects of the latest fetch of entity `number`, for batch faulting; nil when there
    /// is none.
    func fetchGroup(of number: Int) -> FetchGroup? {
        let groups = unsafe _fetchGroups
        return number < groups.count ? groups[number] : nil
    }

    /// Records `group` as the latest fetch of entity `number` (nil forgets it).
    func setFetchGroup(_ group: FetchGroup?, of number: Int) {
        if unsafe _fetchGroups.isEmpty {
            guard group != nil else { return }
            let entityCount = unsafe _registry.count
            unsafe _fetchGroups.reserveCapacity(entityCount)
            for _ in 0..<entityCount { unsafe _fetchGroups.append(nil) }
        }
        unsafe _fetchGroups[number] = group
    }

    /// Forgets every fetch group.
    func removeFetchGroups() {
        unsafe _fetchGroups = []
    }

    /// Forgets every registered object.
    func removeRegisteredObjects() {
        for number in unsafe _registry.indices { unsafe _registry[number] = IdentityMap() }
    }
}
