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
/// `relationDirty` and `temporaries` here.
final class ContextObjects {
    @exclusivity(unchecked) private var _registry: [IdentityMap]
    @exclusivity(unchecked) private var _inserted: [ManagedObject] = []
    @exclusivity(unchecked) private var _updated: [ManagedObject] = []
    @exclusivity(unchecked) private var _deleted: [ManagedObject] = []
    @exclusivity(unchecked) private var _touched: [ManagedObject] = []
    @exclusivity(unchecked) private var _relationDirty: [ManagedObject] = []
    @exclusivity(unchecked) private var _temporaries: TemporaryMap = [:]

    /// Empty state for a schema of `entityCount` entities.
    init(entityCount: Int) {
        unsafe _registry = Array(repeating: [:], count: entityCount)
    }

    /// The identity map: per entity number, the one instance of each row the context holds.
    var registry: [IdentityMap] {
        @inline(__always) get { unsafe _registry }
        @inline(__always) _modify { yield &(unsafe _registry) }
    }
    /// Objects inserted since the last save.
    var inserted: [ManagedObject] {
        @inline(__always) get { unsafe _inserted }
        @inline(__always) _modify { yield &(unsafe _inserted) }
    }
    /// Saved objects whose attributes changed since the last save.
    var updated: [ManagedObject] {
        @inline(__always) get { unsafe _updated }
        @inline(__always) _modify { yield &(unsafe _updated) }
    }
    /// Objects marked for deletion.
    var deleted: [ManagedObject] {
        @inline(__always) get { unsafe _deleted }
        @inline(__always) _modify { yield &(unsafe _deleted) }
    }
    /// Saved objects whose to-many relationships changed (their version is bumped at save).
    var touched: [ManagedObject] {
        @inline(__always) get { unsafe _touched }
        @inline(__always) _modify { yield &(unsafe _touched) }
    }
    /// Objects whose to-one relationships changed in memory since the last save.
    var relationDirty: [ManagedObject] {
        @inline(__always) get { unsafe _relationDirty }
        @inline(__always) _modify { yield &(unsafe _relationDirty) }
    }
    /// Inserted objects by temporary serial.
    var temporaries: TemporaryMap {
        @inline(__always) get { unsafe _temporaries }
        @inline(__always) _modify { yield &(unsafe _temporaries) }
    }
}
