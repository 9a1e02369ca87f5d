import CrashModels
import Foundation
import StrataStorage

/// Runs the crash writer's migration modes (`Tests/CrashWriter/MigrationModes.swift`) for
/// ``MigrationCrashTests``, killing the child when asked.
enum MigrationCrashChild {
    /// What a child printed, how it ended, and how long it ran after its awaited line.
    struct Run {
        /// Complete lines only: a line cut by the kill was never printed.
        var lines: [String]
        var status: Int32
        /// From the awaited line (or the launch) to the child's exit, or to its "migrated" line
        /// when it was awaited and not killed.
        var sinceOpen: Duration
        /// From the awaited line to the child's "migrating" line, when it was awaited and not killed.
        var untilMigrating: Duration?
    }

    /// Migrates the store to `target` in a child, killed `killAfter` after it printed "open".
    static func migrate(
        kind: EngineKind, store: TestStore, target: MigrationCrash.Target, killAfter: Duration?
    ) async throws -> Run {
        try await run(
            kind: kind, store: store, arguments: ["--mode", "migrate", "--target", target.rawValue], waitFor: "open",
            killAfter: killAfter)
    }

    /// Starts the crash writer with `arguments`, reads its output up to the line `waitFor`, then
    /// sends SIGKILL `killAfter` later (or lets it finish) and collects the rest. The reads and
    /// the wait for the exit block threads of their own (``Blocking``), not the test's.
    static func run(
        kind: EngineKind, store: TestStore, arguments: [String], waitFor: String?, killAfter: Duration?
    ) async throws -> Run {
        let process = Process()
        process.executableURL = CrashSafetyTests.writerURL
        process.arguments =
            arguments + ["--engine", kind.rawValue, "--store", store.configuration.location.path]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let handle = output.fileHandleForReading
        var text = Data()
        if let waitFor {
            while lines(text).contains(waitFor) == false {
                let chunk = try await Blocking.run { handle.availableData }
                if chunk.isEmpty { break }
                text += chunk
            }
        }
        let started = ContinuousClock.now
        var sinceOpen: Duration?
        var untilMigrating: Duration?
        if let killAfter {
            // Timed on a thread of its own: a task's sleep ends when the test's pool has a thread
            // free, which under load is long after the delay, and the kills would all land late.
            let pid = process.processIdentifier
            let seconds = Double(killAfter.components.seconds) + Double(killAfter.components.attoseconds) / 1e18
            try await Blocking.run {
                Thread.sleep(forTimeInterval: seconds)
                kill(pid, SIGKILL)
            }
        } else if waitFor != nil {
            // Uninterrupted: time the open itself, up to "migrated", not the close and the exit,
            // and when the migration's first progress report came ("migrating").
            while lines(text).contains("migrated") == false {
                if untilMigrating == nil, lines(text).contains("migrating") {
                    untilMigrating = started.duration(to: .now)
                }
                let chunk = try await Blocking.run { handle.availableData }
                if chunk.isEmpty { break }
                text += chunk
            }
            if untilMigrating == nil, lines(text).contains("migrating") { untilMigrating = started.duration(to: .now) }
            sinceOpen = started.duration(to: .now)
        }
        await Blocking.waitForExit(process)
        sinceOpen = sinceOpen ?? started.duration(to: .now)
        text += try await Blocking.run { handle.readDataToEndOfFile() }
        return Run(
            lines: lines(text), status: process.terminationStatus, sinceOpen: sinceOpen ?? .zero,
            untilMigrating: untilMigrating)
    }

    /// The complete lines of `text`.
    private static func lines(_ text: Data) -> [String] {
        String(decoding: text, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
            .dropLast().map(String.init)
    }
}
