import CrashModels
import Foundation
import StrataStorage
import StrataTestSupport

/// Runs the crash writer's migration modes (`Tests/HelperPrograms/CrashWriter/MigrationModes.swift`) for
/// ``MigrationCrashTests`` and ``MigrationRaceTests``.
enum MigrationCrashChild {
    /// What a child printed and how it ended.
    struct Run {
        /// Complete lines only: a line cut by the kill was never printed.
        var lines: [String]
        var status: Int32
        /// The migrate mode's own timing of an uninterrupted migration (its "timing" line): from
        /// "open" to "migrated", and to the first progress report ("migrating") when there was one.
        var sinceOpen: Duration?
        var untilMigrating: Duration?
    }

    /// Migrates the store to `target` in a child, which kills itself with SIGKILL `killAfter`
    /// after it printed "open" (timed by the child: the test's process under load reads "open"
    /// late, and its kills of a migration of a few milliseconds would all land after the commit).
    static func migrate(
        kind: EngineKind, store: TestStore, target: MigrationCrash.Target, killAfter: Duration?
    ) async throws -> Run {
        let kill = killAfter.map { ["--kill-after-ns", String($0.nanoseconds)] } ?? []
        var run = try await run(
            kind: kind, store: store, arguments: ["--mode", "migrate", "--target", target.rawValue] + kill)
        if let timing = run.lines.last(where: { $0.hasPrefix("timing ") }) {
            let fields = timing.split(separator: " ").dropFirst().compactMap { Int64($0) }
            if fields.count == 2 {
                run.untilMigrating = fields[0] < 0 ? nil : .nanoseconds(fields[0])
                run.sinceOpen = .nanoseconds(fields[1])
            }
        }
        return run
    }

    /// Runs the crash writer with `arguments` to its exit and collects what it printed. The reads
    /// and the wait for the exit block threads of their own (``Blocking``), not the test's.
    static func run(kind: EngineKind, store: TestStore, arguments: [String]) async throws -> Run {
        let process = SpawnedProcess()
        process.executableURL = CrashSafetyTests.writerURL
        process.arguments =
            arguments + ["--engine", kind.rawValue, "--store", store.configuration.location.path]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let handle = output.fileHandleForReading
        let text = try await Blocking.run { handle.readDataToEndOfFile() }
        await Blocking.waitForExit(process)
        return Run(lines: lines(text), status: process.terminationStatus)
    }

    /// The complete lines of `text`.
    private static func lines(_ text: Data) -> [String] {
        String(decoding: text, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
            .dropLast().map(String.init)
    }
}
