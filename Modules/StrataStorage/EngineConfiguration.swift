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

    /// A configuration; engines provide factories such as `.sqlite(at:)` that call this.
    public init(name: String, location: URL, open: @escaping @Sendable (StoreSchema) throws -> any StorageEngine) {
        self.name = name
        self.location = location
        self.open = open
    }
}
