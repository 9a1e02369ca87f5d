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
/// The kill delays come from the seed of ``CrashSafetyTests`` (`STRATA_SEED` replays them) and
/// a ``KillWindow`` placed by three uninterrupted migrations, timed by the child itself from its
/// "open" line (to its "migrating" and "migrated" lines). The child kills itself with SIGKILL at
/// the delay, on a thread of its own: a migration can take a few milliseconds, less than the test
/// process under load takes to read "open". A kill lands "during the migration" when the child
/// printed its first progress report and not yet "migrated".
@Suite("migration crash safety", .serialized)
struct MigrationCrashTests {
    /// How many kills must land during the migration, per engine and target.
    static let killsDuringMigration = ProcessInfo.processInfo.environment["STRATA_STRESS"] == "1" ? 60 : 10

    /// Its subject is what a killed process leaves in the store: the engines whose store outlives
    /// the process (``EngineKind/durable``); an in-memory store ends with it.
    @Test(
        "SIGKILL during a migration leaves the store wholly at version 1 or wholly at version 2",
        arguments: EngineKind.durable, MigrationCrash.Target.allCases)
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

        // Three migrations without a kill: each must reach version 2 whole; the medians of their
        // lengths place the kills (the machine's load varies, so one run is a poor measure).
        var lengths: [Duration] = []
        var starts: [Duration] = []
        for _ in 0..<3 {
            try MigrationCrashStore.copy(pristine, to: store)
            let full = try await MigrationCrashChild.migrate(kind: kind, store: store, target: target, killAfter: nil)
            try #require(full.lines.contains("migrated"), "the migration did not complete: \(full.lines)")
            let migrated = await MigrationCrashStore.classify(store, target: target, rows: rows, shapes: shapes)
            try #require(migrated == .version2, "an uninterrupted migration left \(migrated)")
            lengths.append(try #require(full.sinceOpen, "no timing line: \(full.lines)"))
            starts.append(full.untilMigrating ?? .zero)
        }
        var window = KillWindow(untilFirstReport: starts.sorted()[1], length: lengths.sorted()[1])
        print("migration crash \(kind) \(target): uninterrupted migrations took \(lengths), kills \(window)")

        var tally = MigrationCrashTally()
        var state = MigrationCrashStore.State.version2
        var kill = 0
        while tally.duringMigration < Self.killsDuringMigration, kill < Self.killsDuringMigration * 8 {
            if state != .version1 { try MigrationCrashStore.copy(pristine, to: store) }
            let delay = window.draw(using: &random)
            let run = try await MigrationCrashChild.migrate(kind: kind, store: store, target: target, killAfter: delay)
            state = await MigrationCrashStore.classify(store, target: target, rows: rows, shapes: shapes)
            tally.record(run, state, label: "kill \(kill) (\(delay) after open)")
            window.learn(from: run, killedAfter: delay)
            kill += 1
        }
        print("migration crash \(kind) \(target): \(tally.summary), seed \(seed)")
        #expect(tally.halfMigrated.isEmpty, "seed \(seed): \(tally.halfMigrated.prefix(5))")
        #expect(
            tally.interrupted > 0,
            "no kill interrupted a migration (store left at version 1 after its open began); seed \(seed)")
    }

    /// Other processes open the store: the engines they share (``EngineKind/sharedAcrossProcesses``);
    /// in another process an in-memory store's name is a store of its own.
    /// (In one process, MigrationWriteRaceTests check the same refusal on every engine.)
    @Test(
        "another process that opens a migrated store with the old schema gets storeNewerThanModel",
        arguments: EngineKind.sharedAcrossProcesses)
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
            kind: kind, store: store, arguments: ["--mode", "open-old"])
        #expect(run.lines == ["refused storeNewerThanModel 2 1"])
        #expect(run.status == 0)
        #expect(try MigrationCrashStore.fileContents(store) == before, "the old schema's open changed the store")
        let shapes = try await MigrationCrashStore.Shapes(kind: kind, target: .inferred)
        let state = await MigrationCrashStore.classify(store, target: .inferred, rows: rows, shapes: shapes)
        #expect(state == .version2)
    }
}

/// When the kills land, from the child's "open" line: from a little before the migration's
/// first progress report to a little after its end, so most kills interrupt the migration itself
/// and some land around its commit. The window follows the kills: one that came after the
/// migration had ended lowers the end to its delay, and one that came before the first report
/// raises the start to its delay (load that changes during the run moves the migration).
struct KillWindow: CustomStringConvertible {
    private(set) var start: Int64
    private(set) var end: Int64

    /// A window from 0.4 times `untilFirstReport` to 1.2 times `length`.
    init(untilFirstReport: Duration, length: Duration) {
        start = untilFirstReport.nanoseconds * 2 / 5
        end = max(length.nanoseconds * 6 / 5, start + 1)
    }

    /// A delay drawn evenly from the window.
    func draw(using random: inout SeededGenerator) -> Duration {
        .nanoseconds(Int64.random(in: start...end, using: &random))
    }

    /// Narrows the window after a kill `delay` after "open" ended `run`.
    mutating func learn(from run: MigrationCrashChild.Run, killedAfter delay: Duration) {
        let delay = delay.nanoseconds
        if run.lines.contains("migrated") {
            end = max(delay, start + 1)
        } else if run.lines.contains("migrating") == false {
            start = delay
            // A migration slower than the window's end: widen it past the kill that came early.
            if end <= start { end = start + max(start / 2, 1_000_000) }
        }
    }

    var description: String { "from \(Duration.nanoseconds(start)) to \(Duration.nanoseconds(end)) after open" }
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
