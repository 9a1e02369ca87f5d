import Foundation
import StrataStorage
import Synchronization

/// What every object of a context shares with it: the thread currently running the context's
/// `perform` (0 when none), the store's identity, a path back to the context, and the arena
/// that holds the objects' column values (every object holds its link, so the values live
/// exactly as long as the objects that use them).
///
/// Walled file (see "Unsafe code" in `Docs/Architecture.md`): the arena skips dynamic
/// exclusivity checks, and the back-reference is mutable state of a `Sendable` class. Both
/// are reached only through the members below.
final class ContextLink: Sendable {
    let ownerThread = Atomic<UInt>(0)
    let storeIdentifier: UUID
    /// The context, until its `deinit` clears this.
    ///
    /// `unowned`, not `weak`: a weak reference gives every context a side table, made and freed
    /// with it, which is a measurable part of a fresh context's cost. `unowned` is checked (a
    /// read after the context is freed stops the program); `ObjectContext.deinit` sets it to
    /// `nil`, so an object that outlives its context sees `nil`, as through a weak reference.
    /// Objects read it only inside `perform` (after their confinement check).
    nonisolated(unsafe) private unowned var _context: ObjectContext?

    /// The column values of the context's objects. Claimed only on the thread running the
    /// context's `perform` (the caller of ``claimSlots(_:count:)`` has passed its confinement
    /// check); freed when the context and all its objects are gone.
    @exclusivity(unchecked) nonisolated(unsafe) private var arena = ValueArena()

    init(storeIdentifier: UUID) {
        self.storeIdentifier = storeIdentifier
    }

    /// The context, or nil once it is gone. Set only by the context (its `init` and `deinit`).
    var context: ObjectContext? {
        get { unsafe _context }
        set { unsafe _context = newValue }
    }

    /// Copies `values` into `count` fresh slots of the arena (`.null` past the end of
    /// `values`). Call only on the thread running the context's `perform`.
    @inline(__always)
    func claimSlots(_ values: ContiguousArray<StoredValue>, count: Int) -> ValueSlots {
        unsafe arena.claim(values, count: count)
    }
}
