import Foundation
import Strata
import StrataConformance

/// A store in its own temporary directory, removed when the value is released.
///
/// On an engine that is not durable (the in-memory one) the store lives only while an engine is
/// open on it, so the first open through ``configuration`` also opens a second engine there, which
/// the value holds until it is released (or ``releaseKeeper()``): a test's close-and-reopen then
/// finds the store, shared by name, instead of a new, empty one, as the conformance kit's harness
/// does. Tests whose subject is what is left once every container closed take
/// ``EngineKind/durable``, or call ``releaseKeeper()`` and assert the in-memory engine's own outcome.
final class TestStore: Sendable {
    let kind: EngineKind
    let directory: URL
    /// Holds an engine open on a store that is not durable, once something opened it.
    private let keeper = StoreKeeper()

    init(_ kind: EngineKind) throws {
        self.kind = kind
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("strata-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    deinit {
        releaseKeeper()
        try? FileManager.default.removeItem(at: directory)
    }

    /// The engine configuration of the store (for the in-memory engine, one that keeps the store
    /// open until the value is released).
    var configuration: EngineConfiguration {
        let configuration = kind.configuration(in: directory)
        return kind.capabilities.isDurable ? configuration : keeper.keepingOpen(configuration)
    }

    /// Closes the engine held open on a store that is not durable: from now on the store lives
    /// only as long as the test's own containers (a no-op on a durable engine).
    func releaseKeeper() {
        keeper.release()
    }

    /// Opens (or reopens) the store with the fixture schema.
    func open(schema: Schema = TestModels.schema) throws -> PersistentContainer {
        try PersistentContainer(schema: schema, engine: configuration)
    }
}
