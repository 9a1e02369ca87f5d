import CrashModels
import Foundation
import Strata
import Testing

/// Two processes open the same version-1 store with version 2 at once, as two copies of an
/// upgraded app launched together would: exactly one migrates, the other opens the result.
@Suite("two processes migrating at once", .serialized)
struct MigrationRaceTests {
    @Test(
        "two processes opening an old store with the new model at once: one migrates, the other opens the result",
        arguments: EngineKind.allCases, MigrationCrash.Target.allCases)
    func twoProcessesMigrateOnce(kind: EngineKind, target: MigrationCrash.Target) async throws {
        try #require(
            FileManager.default.isExecutableFile(atPath: CrashSafetyTests.writerURL.path),
            "build the strata-crash-writer product first (swift build)")
        let rows = 3_000
        let store = try TestStore(kind)
        try await MigrationCrashStore.makeVersion1(store, rows: rows)
        async let first = MigrationCrashChild.migrate(kind: kind, store: store, target: target, killAfter: nil)
        async let second = MigrationCrashChild.migrate(kind: kind, store: store, target: target, killAfter: nil)
        let runs = try await [first, second]
        for run in runs {
            #expect(run.status == 0, "a child failed: \(run.lines)")
            #expect(run.lines.last == "migrated", "a child did not open the store: \(run.lines)")
        }
        // Only the process that migrates reports progress.
        #expect(runs.filter { $0.lines.contains("migrating") }.count == 1, "\(runs.map(\.lines))")
        let shapes = try await MigrationCrashStore.Shapes(kind: kind, target: target)
        let state = await MigrationCrashStore.classify(store, target: target, rows: rows, shapes: shapes)
        #expect(state == .version2)
    }
}
