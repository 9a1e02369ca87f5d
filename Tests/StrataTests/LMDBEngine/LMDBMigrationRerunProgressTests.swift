import Foundation
import StrataTestSupport
import Synchronization
import Testing

@testable import Strata
@testable import StrataLMDB

/// LMDB runs a migration whose writes do not fit its map again, whole, after growing the map: the
/// progress a container reports must still never go back (the kit's progress check holds on every
/// engine; only LMDB runs a migration twice in one open). Which reports a re-run repeats depends on
/// where the map fills; `ForwardOnlyProgressTests` checks the filter on a second run that starts
/// over from 0.
@Suite("LMDB: migration progress when the migration runs again")
struct LMDBMigrationRerunProgressTests {
    enum V1: VersionedSchema {
        static let version = 1
        static var models: [ManagedObject.Type] { [Note.self] }

        final class Note: ManagedObject {
            override class var entityName: String { "Note" }
            @Attribute var title = ""
        }
    }

    /// Every note gets a shelf, which the stage makes 400 characters long: with the rewritten
    /// rows, more than a 1 MiB map holds.
    enum V2: VersionedSchema {
        static let version = 2
        static var models: [ManagedObject.Type] { [Note.self] }

        final class Note: ManagedObject {
            override class var entityName: String { "Note" }
            @Attribute var title = ""
            @Attribute var shelf = ""
        }
    }

    enum Plan: MigrationPlan {
        static var schemas: [any VersionedSchema.Type] { [V1.self, V2.self] }
        static var stages: [MigrationStage] {
            [
                .custom(
                    from: V1.self, to: V2.self, willMigrate: nil,
                    didMigrate: { context in
                        for note in try context.fetch(FetchRequest<V2.Note>()) {
                            note.shelf = String(repeating: "s", count: 400)
                        }
                        try context.save()
                    })
            ]
        }
    }

    @Test("the fraction reported never goes back, though the migration ran twice")
    func progressNeverGoesBack() async throws {
        let store = try TestStore(.lmdb)
        let directory = store.directory.appendingPathComponent("store.lmdb")
        let configuration = EngineConfiguration.lmdb(at: directory, options: LMDBOptions(initialMapSize: 1 << 20))
        let old = try PersistentContainer(schema: try V1.schema(), engine: configuration)
        // In saves of 200, each of which the map grows ahead of: no write runs again before the
        // migration, so the count below is the migration's.
        for batch in 0..<10 {
            try await old.performUnitOfWork { context in
                for index in 0..<200 {
                    V1.Note(context: context).title =
                        "Note \(batch * 200 + index) " + String(repeating: "~", count: 200)
                }
                try context.save()
            }
        }
        old.close()

        let fractions = Mutex<[Double]>([])
        let migrated = try PersistentContainer(
            schema: try V2.schema(), migrationPlan: Plan.self, engine: configuration
        ) { progress in
            fractions.withLock { $0.append(progress.fractionCompleted) }
        }
        defer { migrated.close() }
        // The environment the container still holds: how often a write ran again.
        let environment = try LMDBRegistry.acquire(directory: directory, options: LMDBOptions(), databases: 1)
        let reruns = environment.rerunWrites.load(ordering: .relaxed)
        LMDBRegistry.release(environment)
        #expect(reruns > 0, "the migration fit the map: this test needs more data or a smaller map")
        let seen = fractions.withLock { $0 }
        #expect(!seen.isEmpty && seen == seen.sorted() && seen.last == 1, "\(seen)")
        let context = migrated.newBackgroundContext()
        let shelves = try await context.perform {
            try context.count(for: FetchRequest<V2.Note>(predicate: #Predicate { $0.shelf.count == 400 }))
        }
        #expect(shelves == 2_000)
    }
}

/// What `ForwardOnlyProgress` passes on of a migration reported twice.
@Suite("migration progress: forward only")
struct ForwardOnlyProgressTests {
    @Test("a second run's reports below the first's highest are left out; equal ones pass")
    func forwardOnly() {
        let passed = Mutex<[Double]>([])
        let forward = ForwardOnlyProgress { progress in passed.withLock { $0.append(progress.fractionCompleted) } }
        for fraction in [0, 0.25, 0.5, 0, 0.25, 0.5, 0.75, 1, 1] {
            forward.report(
                MigrationProgress(
                    storeVersion: 1, modelVersion: 2, stage: 1, stageCount: 1, rowsMigrated: 0, rowsToMigrate: 0,
                    fractionCompleted: fraction))
        }
        #expect(passed.withLock { $0 } == [0, 0.25, 0.5, 0.5, 0.75, 1, 1])
    }
}
