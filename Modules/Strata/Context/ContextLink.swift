import Foundation
import Synchronization

/// What every object of a context shares with it: the thread currently running the context's
/// `perform` (0 when none), the store's identity, a path back to the context, and the arena
/// that holds the objects' column values (every object holds its link, so the values live
/// exactly as long as the objects that use them).
final class ContextLink: Sendable {
    let ownerThread = Atomic<UInt>(0)
    let storeIdentifier: UUID
    /// The context, until its `deinit` clears this.
    ///
    /// Not `weak`: a weak reference gives every context a side table, made and freed with it,
    /// which is a measurable part of a fresh context's cost. Objects read it only inside
    /// `perform` (after their confinement check), where the running block keeps the context
    /// alive; `ObjectContext.deinit` sets it to `nil`, so an object that outlives its context
    /// sees `nil`, as it would through a weak reference.
    nonisolated(unsafe) unowned(unsafe) var context: ObjectContext?

    /// The column values of the context's objects. Claimed only on the thread running the
    /// context's `perform`; freed when the context and all its objects are gone.
    @exclusivity(unchecked) nonisolated(unsafe) var arena = ValueArena()

    init(storeIdentifier: UUID) {
        self.storeIdentifier = storeIdentifier
    }
}
