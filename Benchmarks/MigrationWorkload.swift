import Foundation
import Strata

/// 9. Migrates a store of N rows from the benchmark's version 1 to version 2 (an attribute with
/// a default added, another renamed), by opening it with version 2: the open's time, against a
/// raw copy of the same rows into the new layout with the C API in one transaction.
///
/// Each round makes a fresh version-1 store (untimed), then times the open that migrates it;
/// the raw side fills a fresh raw store (untimed), then times its copy. Both are checked
/// afterwards: every row present, the renamed values kept, the new attribute filled.
enum MigrationWorkload {
    static func run(
        engine: EngineChoice, dataset: Dataset, repetitions: Int, scratch: URL,
        makeRaw: @escaping (URL) throws -> any RawBaseline
    ) async throws -> WorkloadResult {
        var serial = 0
        func directory(_ label: String) -> URL {
            serial += 1
            return scratch.appendingPathComponent("migration-\(label)-\(serial)")
        }
        let samples = try await measurePair(
            "migration", repetitions: repetitions,
            strata: {
                let place = directory("strata")
                defer { removeScratch(place) }
                let store = try await StrataStore.make(engine, in: place, dataset: dataset)
                _ = try await StrataWorkloads.insert(store, dataset)
                store.container.close()
                let configuration = StrataStore.configuration(engine, in: place)
                let schema = try BenchmarkSchemaV2.make()
                let began = Clock.now()
                let container = try openMigrating(schema, configuration)
                let elapsed = Clock.now() - began
                defer { container.close() }
                try await check(container, dataset)
                return (elapsed, nil)
            },
            baseline: {
                let place = directory("raw")
                defer { removeScratch(place) }
                let raw = try makeRaw(place)
                defer { raw.close() }
                try raw.insertRows(dataset)
                let began = Clock.now()
                let copied = try raw.migrateRows(flag: BenchmarkSchemaV2.flagDefault)
                let elapsed = Clock.now() - began
                guard copied == dataset.rowCount else {
                    throw BenchmarkError.mismatch("the raw migration copied \(copied) of \(dataset.rowCount) rows")
                }
                return (elapsed, nil)
            })
        return .measured(
            .migration, on: engine, unit: "ns/row", unitScale: 1, baselineName: "raw \(engine.displayName) copy",
            items: dataset.rowCount, strata: samples.strata, baseline: samples.baseline)
    }

    /// The measured open (a function of its own, so that `Scripts/count-instructions.sh` can count it).
    @inline(never)
    static func openMigrating(_ schema: Schema, _ configuration: EngineConfiguration) throws -> PersistentContainer {
        try PersistentContainer(schema: schema, engine: configuration)
    }

    /// Every row migrated: the count, the renamed attribute's values and the new attribute's default.
    private static func check(_ container: PersistentContainer, _ dataset: Dataset) async throws {
        let context = container.newBackgroundContext()
        let problem = try await context.perform { () -> String? in
            let rows = try context.fetch(FetchRequest<BenchmarkSchemaV2.Row>())
            guard rows.count == dataset.rowCount else { return "\(rows.count) of \(dataset.rowCount) rows" }
            for row in rows {
                let index = Int(row.objectID.primaryKey ?? 0) - 1
                guard dataset.memos.indices.contains(index), row.note == dataset.memos[index] else {
                    return "row \(index + 1) lost its memo"
                }
                guard row.flag == BenchmarkSchemaV2.flagDefault else { return "row \(index + 1) has flag \(row.flag)" }
            }
            return nil
        }
        if let problem { throw BenchmarkError.mismatch("after the migration: \(problem)") }
    }
}
