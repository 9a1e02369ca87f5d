public import Foundation

/// A store opened with a schema on a chosen engine: the usual ``ContextFactory``.
///
/// ```swift
/// let schema = try Schema(version: 1, [Account.self, Transaction.self])
/// let container = try PersistentContainer(schema: schema, engine: .sqlite(at: storeURL))
/// let context = container.newBackgroundContext()
/// ```
///
/// The container is `Sendable` and meant to live as long as the app uses the store. Contexts
/// are cheap: make one per unit of work.
public final class PersistentContainer: ContextFactory {
    /// The schema the store was opened with.
    public let schema: Schema
    /// The engine configuration chosen at init.
    public let configuration: EngineConfiguration
    let engine: any StorageEngine

    /// Opens (creating if needed) the store.
    /// - Parameters:
    ///   - schema: the model classes and version.
    ///   - engine: the engine and location, e.g. `.sqlite(at: url)` or `.lmdb(at: url)`.
    /// - Throws: ``StrataError/schemaMismatch(storeVersion:modelVersion:)`` for a store made with
    ///   another schema version, ``StrataError/notAStore(path:reason:)`` for a file that is not a
    ///   store of this engine, and engine errors (`.io`, `.busy`, `.storeCorrupt`).
    public init(schema: Schema, engine: EngineConfiguration) throws {
        self.schema = schema
        self.configuration = engine
        self.engine = try engine.open(schema.storeSchema)
    }

    deinit {
        engine.close()
    }

    /// A new context on its own serial queue. See ``ObjectContext``.
    public func newBackgroundContext() -> ObjectContext {
        ObjectContext(engine: engine, schema: schema, name: nil)
    }

    /// A new context with a name that appears in misuse messages.
    public func newBackgroundContext(named name: String) -> ObjectContext {
        ObjectContext(engine: engine, schema: schema, name: name)
    }

    /// The store's UUID, as carried by every object ID.
    public var storeIdentifier: UUID { engine.storeIdentifier }
}
