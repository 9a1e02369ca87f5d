public import Foundation

/// How to open a storage engine: chosen by one argument when a container is created.
///
/// Engines add static factories, e.g. `.sqlite(at:)` in `StrataSQLite` and `.lmdb(at:)` in
/// `StrataLMDB`.
///
/// ```swift
/// let container = try PersistentContainer(schema: schema, engine: .sqlite(at: url))
/// ```
public struct EngineConfiguration: Sendable {
    /// A short engine name for messages and logs, e.g. `"sqlite"`.
    public var name: String
    /// Where the store lives.
    public var location: URL
    /// Opens (creating if needed) the store for a schema. Only the container calls it: users hand
    /// the configuration to `PersistentContainer` and never reach the engine themselves.
    package var open: @Sendable (StoreSchema) throws -> any StorageEngine
    /// Raw access to what the store holds, for the conformance kit's damaged-store checks on
    /// engines whose store is not a set of files (a server's schema): nil for file stores,
    /// which the kit damages through the file system at ``location``.
    package var storeContents: StoreContents?

    /// A configuration; engines provide factories such as `.sqlite(at:)` that call this.
    public init(name: String, location: URL, open: @escaping @Sendable (StoreSchema) throws -> any StorageEngine) {
        self.name = name
        self.location = location
        self.open = open
    }
}

/// What a store holds, as raw parts an engine that keeps no files lets the conformance kit read
/// and overwrite (a server engine's metadata values, say), so the kit can damage the store as
/// it damages the files of an embedded one and check the engine refuses it with a typed error.
package struct StoreContents: Sendable {
    /// Reads every part, in a stable order.
    package var read: @Sendable () throws -> [Data]
    /// Replaces the parts `read` returned, in the same order, with these bytes.
    package var write: @Sendable ([Data]) throws -> Void

    package init(read: @escaping @Sendable () throws -> [Data], write: @escaping @Sendable ([Data]) throws -> Void) {
        self.read = read
        self.write = write
    }
}
