import Foundation
import Strata
import StrataLMDB
import StrataSQLite

/// A Strata store of the benchmark schema in its own scratch directory, on one engine.
final class StrataStore: Sendable {
    let directory: URL
    let container: PersistentContainer

    /// Creates an empty store and inserts the data set's accounts (not timed). Its contexts'
    /// saves append persistent history unless `recordsHistory` is false.
    static func make(
        _ engine: EngineChoice, in directory: URL, dataset: Dataset, recordsHistory: Bool = true,
        hook: BenchmarkHook = .chosen
    ) async throws -> StrataStore {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let configuration = configuration(engine, in: directory)
        let store = StrataStore(
            directory: directory,
            container: try PersistentContainer(
                schema: try BenchmarkSchema.make(), engine: configuration, recordsHistory: recordsHistory,
                instrumentation: hook.instrumentation))
        let context = store.container.newBackgroundContext()
        try await context.perform {
            for name in dataset.accountNames { BenchAccount(context: context).name = name }
            try context.save()
        }
        return store
    }

    /// The engine configuration of the store that ``make(_:in:dataset:)`` makes in `directory`.
    static func configuration(_ engine: EngineChoice, in directory: URL) -> EngineConfiguration {
        switch engine {
        case .sqlite: .sqlite(at: directory.appendingPathComponent("store.sqlite"))
        case .lmdb: .lmdb(at: directory.appendingPathComponent("store.lmdb"))
        case .postgres: BenchmarkPostgres.configuration(for: directory)
        }
    }

    private init(directory: URL, container: PersistentContainer) {
        self.directory = directory
        self.container = container
    }

    /// The object IDs of rows, for lookups.
    func rowIDs(_ keys: [Int64]) -> [ObjectID] {
        let store = container.storeIdentifier
        return keys.map { ObjectID(storeIdentifier: store, entityName: BenchRow.entityName, primaryKey: $0) }
    }
}

/// Removes a scratch directory once nothing uses the store in it any more, and on PostgreSQL
/// the store's schema.
func removeScratch(_ directory: URL) {
    try? FileManager.default.removeItem(at: directory)
    BenchmarkPostgres.dropSchema(for: directory)
}
