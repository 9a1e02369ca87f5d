import Foundation
package import Strata
import StrataStorage
import Synchronization

/// Keeps the stores of an engine that is not durable (the in-memory one) alive across a
/// close-and-reopen: the first successful open of a location through ``keepingOpen(_:)`` also
/// opens a second engine there with the same schema, held until ``release()``, so a reopen finds
/// the store, shared by name, instead of a new, empty one. The conformance harness and the
/// project's own `TestStore` both keep their stores this way.
///
/// ```swift
/// let keeper = StoreKeeper()
/// let configuration = keeper.keepingOpen(.inMemory(name: "orders"))
/// try PersistentContainer(schema: schema, engine: configuration).close()
/// let again = try PersistentContainer(schema: schema, engine: configuration)  // same store
/// keeper.release()
/// ```
package final class StoreKeeper: Sendable {
    /// The engine held open per store location.
    private let kept = Mutex<[String: any StorageEngine]>([:])

    /// A keeper that holds nothing yet.
    package init() {}

    /// `configuration`, whose first successful open of its location also opens the engine this
    /// keeper holds there until ``release()``.
    package func keepingOpen(_ configuration: EngineConfiguration) -> EngineConfiguration {
        let open = configuration.open
        let location = configuration.location.absoluteString
        var keeping = configuration
        keeping.open = { [self] schema in
            let engine = try open(schema)
            if kept.withLock({ $0[location] == nil }), let second = try? open(schema) {
                let extra = kept.withLock { kept -> (any StorageEngine)? in
                    if kept[location] != nil { return second }
                    kept[location] = second
                    return nil
                }
                extra?.close()
            }
            return engine
        }
        return keeping
    }

    /// Closes every engine held: from now on each store lives only as long as its own containers.
    package func release() {
        let engines = kept.withLock { kept in
            defer { kept = [:] }
            return Array(kept.values)
        }
        for engine in engines { engine.close() }
    }
}
