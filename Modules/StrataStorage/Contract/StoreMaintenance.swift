package import Foundation

/// An engine's ways to copy and back up an existing store, for tools that have no model
/// (`strata copy`, `strata backup`): each engine offers one through a package-level factory beside
/// its ``StoreInspection`` factory.
package struct StoreMaintenance: Sendable {
    /// Each entity's key counter, read without writing: entity name → the next key the store
    /// hands out (keys of deleted rows stay below it, so they are never handed out again).
    package var readKeyCounters: @Sendable () throws -> [String: Int64]
    /// Rewrites the identifier of a store nothing has open (a copy's new target), so that the
    /// object URIs of the store it copies name its objects.
    package var adoptIdentifier: @Sendable (UUID) throws -> Void
    /// Writes a consistent copy of the whole store, history included, to a new location that must
    /// not exist, while other processes keep writing; nil for an engine that has no such copy.
    package var backup: (@Sendable (URL) throws -> Void)?

    /// A maintenance access.
    package init(
        readKeyCounters: @escaping @Sendable () throws -> [String: Int64],
        adoptIdentifier: @escaping @Sendable (UUID) throws -> Void,
        backup: (@Sendable (URL) throws -> Void)?
    ) {
        self.readKeyCounters = readKeyCounters
        self.adoptIdentifier = adoptIdentifier
        self.backup = backup
    }
}
