import CrashModels
import Foundation
import Strata
import StrataTestSupport
import Testing

/// Two processes open the same version-1 store with version 2 at once, as two copies of an
/// upgraded app launched together would: exactly one migrates, the other opens the result.
@Suite("migrations and other processes", .serialized)
struct MigrationRaceTests {
    /// Other processes open the store: the engines they share (``EngineKind/sharedAcrossProcesses``);
    /// in another process an in-memory store's name is a store of its own.
    @Test(
        "two processes opening an old store with the new model at once: one migrates, the other opens the result",
        arguments: EngineKind.sharedAcrossProcesses, MigrationCrash.Target.allCases)
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
            #expect(run.sinceOpen != nil, "a child printed no timing: \(run.lines)")
            #expect(run.lines.dropLast().last == "migrated", "a child did not open the store: \(run.lines)")
        }
        // Only the process that migrates reports progress.
        #expect(runs.filter { $0.lines.contains("migrating") }.count == 1, "\(runs.map(\.lines))")
        let shapes = try await MigrationCrashStore.Shapes(kind: kind, target: target)
        let state = await MigrationCrashStore.classify(store, target: target, rows: rows, shapes: shapes)
        #expect(state == .version2)
    }

    /// A process that opened the store with version 1 keeps it open while this one migrates it
    /// (an old copy of the app still running): its next save and its next read are refused with
    /// `storeNewerThanModel`, and the migrated store is untouched by it. Before, SQLite saved the
    /// item in the migrated store (without the label every migrated row got), and both engines
    /// read with the old layout ("the store is damaged" on LMDB).
    /// Other processes open the store: the engines they share (``EngineKind/sharedAcrossProcesses``);
    /// in another process an in-memory store's name is a store of its own.
    @Test(
        "a process holding the store open with the old model while another migrates it: its save and read are refused",
        arguments: EngineKind.sharedAcrossProcesses)
    func aProcessHoldingTheOldModelIsRefusedAfterTheMigration(kind: EngineKind) async throws {
        try #require(
            FileManager.default.isExecutableFile(atPath: CrashSafetyTests.writerURL.path),
            "build the strata-crash-writer product first (swift build)")
        let rows = 300
        let store = try TestStore(kind)
        try await MigrationCrashStore.makeVersion1(store, rows: rows)
        let process = SpawnedProcess()
        process.executableURL = CrashSafetyTests.writerURL
        process.arguments = [
            "--mode", "hold-old", "--engine", kind.rawValue, "--store", store.configuration.location.path,
        ]
        let output = Pipe()
        let input = Pipe()
        process.standardOutput = output
        process.standardInput = input
        process.standardError = FileHandle.nullDevice
        try process.run()
        let reading = output.fileHandleForReading
        var text = Data()
        while !String(decoding: text, as: UTF8.self).contains("open\n") {
            let chunk = reading.availableData
            if chunk.isEmpty { break }
            text += chunk
        }
        do {
            try PersistentContainer(schema: try MigrationCrashV2.schema(), engine: store.configuration).close()
        } catch {
            Issue.record("the migration failed: \(error)")
        }
        input.fileHandleForWriting.write(Data("go\n".utf8))
        try input.fileHandleForWriting.close()
        process.waitUntilExit()
        text += reading.readDataToEndOfFile()
        let lines = String(decoding: text, as: UTF8.self).split(separator: "\n").map(String.init)
        #expect(
            lines == ["open", "save: storeNewerThanModel 2 1", "read: storeNewerThanModel 2 1"], "\(lines)")
        let shapes = try await MigrationCrashStore.Shapes(kind: kind, target: .inferred)
        let state = await MigrationCrashStore.classify(store, target: .inferred, rows: rows, shapes: shapes)
        #expect(state == .version2)
    }
}
