import Foundation
import Synchronization

/// What every object of a context shares with it: the thread currently running the context's
/// `perform` (0 when none), the store's identity, and a weak path back to the context.
final class ContextLink: Sendable {
    let ownerThread = Atomic<UInt>(0)
    let storeIdentifier: UUID
    nonisolated(unsafe) weak var context: ObjectContext?

    init(storeIdentifier: UUID) {
        self.storeIdentifier = storeIdentifier
    }
}
