import CrashModels
import Foundation
import Strata
import StrataTestSupport
import Testing

/// Kills a process with SIGKILL while it migrates a version-1 store of 20,000 items to
/// version 2 (a migration that rewrites every row), then classifies the store: it must be
/// wholly at version 1 (every row as it was) or wholly at version 2 (every row migrated).
/// Each engine and target is killed until 10 kills landed during the migration (20 per engine)
/// in CI, 60 (120 per engine) with `STRATA_STRESS=1`, or until 8 times as many kills ran.
///
/// The kill delays come from the seed of ``CrashSafetyTests`` (`STRATA_SEED` replays them);
/// each delay is drawn between 0.4 times the median time to the migration's first progress
/// report and 1.2 times the median length of three uninterrupted migrations, measured from the
/// child's "open" line (to its "migrating" and "migrated" lines), so most kills land inside the
/// migration and some just after its commit. A kill lands "during the
/// migration" when the child printed its first progress report and not yet "migrated".
@Suite("migration crash safety", .serialized)
struct MigrationCrashTests {
    /// How many kills must land during the migration, per engine and target.
    static let killsDuringMigration = ProcessInfo.processInfo.environment["STRATA_STRESS"] == "1" ? 60 : 10

    @Test(
        "SIGKILL during a migration leaves the store wholly at version 1 or wholly at version 2",
        arguments: EngineKind.allCases, MigrationCrash.Target.allCases)
    func killDuringMigration(kind: EngineKind, target: MigrationCrash.Target) async throws {
        try #require(
            FileManager.default.isExecutableFile(atPath: CrashSafetyTests.writerURL.path),
            "build the strata-crash-writer product first (swift build)")
        let seed = CrashSafetyTests.seed
        print("migration crash \(kind) \(target): seed \(seed) (replay with STRATA_SEED=\(seed))")
        var random = SeededGenerator(seed: seed)
        let rows = MigrationCrash.rowCount
        let pristine = try TestStore(kind)
        try await MigrationCrashStore.makeVersion1(pristine, rows: rows)
        let shapes = try await MigrationCrashStore.Shapes(kind: kind, target: target)
        let store = try TestStore(kind)

        // Three migrations without a kill: each must reach version 2 whole; the median of their
        // lengths spreads the kills (the machine's load varies, so one run is a poor measure).
        var lengths: [Duration] = []
        var starts: [Duration] = []
        for _ in 0..<3 {
            try MigrationCrashStore.copy(pristine, to: store)
            let full = try await MigrationCrashChild.migrate(kind: kind, store: store, target: target, killAfter: nil)
            try #require(full.lines.contains("migrated"), "the migration did not complete: \(full.lines)")
            let migrated = await MigrationCrashStore.classify(store, target: target, rows: rows, shapes: shapes)
            try #require(migrated == .version2, "an uninterrupted migration left \(migrated)")
            lengths.append(full.sinceOpen)
            starts.append(full.untilMigrating ?? .zero)
        }
        let median = lengths.sorted()[1]
        // Kills land from a little before the migration's first report (the median of when it
        // came) to a little after the median end, so most of them interrupt the migration itself
        // and some land around its commit.
        let start = starts.sorted()[1].nanoseconds * 2 / 5
        let window = max(median.nanoseconds * 6 / 5, start + 1)
        print("migration crash \(kind) \(target): uninterrupted migrations took \(lengths), median \(median)")

        var tally = MigrationCrashTally()
        var state = MigrationCrashStore.State.version2
        var kill = 0
        while tally.duringMigration < Self.killsDuringMigration, kill < Self.killsDuringMigration * 8 {
            if state != .version1 { try MigrationCrashStore.copy(pristine, to: store) }
            let delay = Duration.nanoseconds(Int64.random(in: start...window, using: &random))
            let run = try await MigrationCrashChild.migrate(kind: kind, store: store, target: target, killAfter: delay)
            state = await MigrationCrashStore.classify(store, target: target, rows: rows, shapes: shapes)
            tally.record(run, state, label: "kill \(kill) (\(delay) after open)")
            kill += 1
        }
        print("migration crash \(kind) \(target): \(tally.summary), seed \(seed)")
        #expect(tally.halfMigrated.isEmpty, "seed \(seed): \(tally.halfMigrated.prefix(5))")
        #expect(
            tally.interrupted > 0,
            "no kill interrupted a migration (store left at version 1 after its open began); seed \(seed)")
    }

    @Test(
        "another process that opens a migrated store with the old schema gets storeNewerThanModel",
        arguments: EngineKind.allCases)
    func anOldSchemaInAnotherProcessIsRefused(kind: EngineKind) async throws {
        try #require(
            FileManager.default.isExecutableFile(atPath: CrashSafetyTests.writerURL.path),
            "build the strata-crash-writer product first (swift build)")
        let rows = 300
        let store = try TestStore(kind)
        try await MigrationCrashStore.makeVersion1(store, rows: rows)
        try PersistentContainer(schema: try MigrationCrashV2.schema(), engine: store.configuration).close()
        let before = try MigrationCrashStore.fileContents(store)

        let run = try await MigrationCrashChild.run(
            kind: kind, store: store, arguments: ["--mode", "open-old"], waitFor: nil, killAfter: nil)
        #expect(run.lines == ["refused storeNewerThanModel 2 1"])
        #expect(run.status == 0)
        #expect(try MigrationCrashStore.fileContents(store) == before, "the old schema's open changed the store")
        let shapes = try await MigrationCrashStore.Shapes(kind: kind, target: .inferred)
        let state = await MigrationCrashStore.classify(store, target: .inferred, rows: rows, shapes: shapes)
        #expect(state == .version2)
    }
}

/// The counts of a run of kills.
struct MigrationCrashTally {
    var kills = 0
    /// Kills after the child printed "open" and before "migrated".
    var duringOpen = 0
    /// Kills after the migration's first progress report ("migrating") and before "migrated".
    var duringMigration = 0
    /// Kills during the open that left the store at version 1: migrations cut off.
    var interrupted = 0
    var atVersion1 = 0
    var atVersion2 = 0
    var halfMigrated: [String] = []

    mutating func record(_ run: MigrationCrashChild.Run, _ state: MigrationCrashStore.State, label: String) {
        kills += 1
        let finished = run.lines.contains("migrated")
        if run.lines.contains("open"), !finished { duringOpen += 1 }
        if run.lines.contains("migrating"), !finished { duringMigration += 1 }
        switch state {
        case .version1:
            atVersion1 += 1
            if run.lines.contains("open"), !finished { interrupted += 1 }
        case .version2: atVersion2 += 1
        case .half(let reason): halfMigrated.append("\(label), child printed \(run.lines): \(reason)")
        }
    }

    var summary: String {
        """
        \(kills) kills, \(duringMigration) during the migration (\(duringOpen) during the open), \
        \(interrupted) interrupted migrations, stores at version 1: \(atVersion1), at version 2: \(atVersion2), \
        half-migrated: \(halfMigrated.count)
        """
    }
}

extension Duration {
    /// The duration in whole nanoseconds.
    var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}
