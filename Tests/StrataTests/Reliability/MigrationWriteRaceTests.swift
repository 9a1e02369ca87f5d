import CrashModels
import Foundation
import Strata
import Synchronization
import Testing

/// A container still on the old model saves while another migrates the store: the save must
/// wait for the migration and be refused with `storeNewerThanModel`, never write into the
/// migrated tables. Before, PostgreSQL checked the schema version before the migration had
/// committed and then wrote once its table locks were released: a NOT NULL violation
/// (`.misuse`) for the staged migration's required column, and a row without the label every
/// migrated row got for the inferred one.
@Suite("old-model writes racing a migration")
struct MigrationWriteRaceTests {
    @Test(
        "an old-model save started while another container migrates: storeNewerThanModel, nothing written",
        arguments: EngineKind.allCases, MigrationCrash.Target.allCases)
    func saveDuringMigration(kind: EngineKind, target: MigrationCrash.Target) async throws {
        let rows = 200
        let store = try TestStore(kind)
        try await MigrationCrashStore.makeVersion1(store, rows: rows)
        let old = try PersistentContainer(schema: try MigrationCrashV1.schema(), engine: store.configuration)
        defer { old.close() }
        let save = Mutex<Task<StrataError?, Never>?>(nil)
        try await Blocking.run {
            let container = try PersistentContainer(
                schema: try target.schema(), migrationPlan: target.plan, engine: store.configuration
            ) { _ in
                // At the first progress report the migration holds the store: the old model's
                // save starts now, and the pause lets it reach the store before the migration
                // commits (a slower machine only makes it start later: the outcome is the same).
                let first = save.withLock { task in
                    guard task == nil else { return false }
                    task = Task { await Self.saveItem(old) }
                    return true
                }
                if first { Thread.sleep(forTimeInterval: 0.3) }
            }
            container.close()
        }
        let task = try #require(save.withLock { $0 }, "the migration reported no progress")
        let error = await task.value
        #expect(error == .storeNewerThanModel(storeVersion: 2, modelVersion: 1), "\(String(describing: error))")
        let shapes = try await MigrationCrashStore.Shapes(kind: kind, target: target)
        let state = await MigrationCrashStore.classify(store, target: target, rows: rows, shapes: shapes)
        #expect(state == .version2)
    }

    /// Saves one new version-1 item; the `StrataError` it threw, or nil.
    static func saveItem(_ container: PersistentContainer) async -> StrataError? {
        do {
            try await container.performUnitOfWork(retries: .none) { context in
                let item = MigrationCrashV1.Item(context: context)
                item.number = 1_000_000
                item.title = "late"
                try context.save()
            }
            return nil
        } catch let error as StrataError {
            return error
        } catch {
            return .misuse("not a StrataError: \(error)")
        }
    }
}
