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
/// `relationDirty`, `temporaries` and `fetchGroups` here.
final class ContextObjects {
    @exclusivity(unchecked) private var _registry: [IdentityMap]
    @exclusivity(unchecked) private var _inserted: [ManagedObject] = []
    @exclusivity(unchecked) private var _updated: [ManagedObject] = []
    @exclusivity(unchecked) private var _deleted: [ManagedObject] = []
    @exclusivity(unchecked) private var _touched: [ManagedObject] = []
    @exclusivity(unchecked) private var _relationDirty: [ManagedObject] = []
    @exclusivity(unchecked) private var _temporaries: TemporaryMap = [:]
    @exclusivity(unchecked) private var _fetchGroups: [FetchGroup?]
    /// Bumped by every change to `inserted`, `updated`, `deleted` or `relationDirty`.
    @exclusivity(unchecked) private var _changeGeneration = 0
    /// The entities with pending changes, as of `_changedModelsGeneration`.
    @exclusivity(unchecked) private var _changedModels: Set<ObjectIdentifier> = []
    @exclusivity(unchecked) private var _changedModelsGeneration = -1

    /// Empty state for a schema of `entityCount` entities.
    init(entityCount: Int) {
        unsafe _registry = Array(repeating: [:], count: entityCount)
        unsafe _fetchGroups = Array(repeating: nil, count: entityCount)
    }

    /// Whether objects of `model` are inserted, updated, deleted or have changed to-one
    /// relationships: O(1) while the lists do not change, whatever their length, so a loop of
    /// relationship faults in a context with many changes does not scan them once per fault.
    func hasChanges(to model: EntityModel) -> Bool {
        if inserted.isEmpty && updated.isEmpty && deleted.isEmpty && relationDirty.isEmpty { return false }
        let generation = unsafe _changeGeneration
        if unsafe _changedModelsGeneration != generation {
            var models = Set<ObjectIdentifier>()
            for list in [inserted, updated, deleted, relationDirty] {
                for object in list { if let model = object.model { models.insert(ObjectIdentifier(model)) } }
            }
            unsafe _changedModels = models
            unsafe _changedModelsGeneration = generation
        }
        return unsafe _changedModels.contains(ObjectIdentifier(model))
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
            unsafe _changeGeneration &+= 1
            yield &(unsafe _inserted)
        }
    }
    /// Saved objects whose attributes changed since the last save.
    var updated: [ManagedObject] {
        @inline(__always) get { unsafe _updated }
        @inline(__always) _modify {
            unsafe _changeGeneration &+= 1
            yield &(unsafe _updated)
        }
    }
    /// Objects marked for deletion.
    var deleted: [ManagedObject] {
        @inline(__always) get { unsafe _deleted }
        @inline(__always) _modify {
            unsafe _changeGeneration &+= 1
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
            unsafe _changeGeneration &+= 1
            yield &(unsafe _relationDirty)
        }
    }
    /// Inserted objects by temporary serial.
    var temporaries: TemporaryMap {
        @inline(__always) get { unsafe _temporaries }
        @inline(__always) _modify { yield &(unsafe _temporaries) }
    }
    /// Per entity number: the objects of the latest fetch of that entity, for batch faulting.
    var fetchGroups: [FetchGroup?] {
        @inline(__always) get { unsafe _fetchGroups }
        @inline(__always) _modify { yield &(unsafe _fetchGroups) }
    }
}
