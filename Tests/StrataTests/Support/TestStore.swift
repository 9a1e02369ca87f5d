import Foundation
import Strata

/// A store in its own temporary directory, removed when the value is released.
final class TestStore: Sendable {
    let kind: EngineKind
    let directory: URL

    init(_ kind: EngineKind) throws {
        self.kind = kind
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("strata-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(at: directory)
    }

    var configuration: EngineConfiguration { kind.configuration(in: directory) }

    /// Opens (or reopens) the store with the fixture schema.
    func open(schema: Schema = TestModels.schema) throws -> PersistentContainer {
        try PersistentContainer(schema: schema, engine: configuration)
    }
}
