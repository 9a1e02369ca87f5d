import Foundation
import Strata
import StrataLMDB
import StrataSQLite
import Testing

@Suite("strata backup")
struct ToolBackupTests {
    /// The backup of a `kind` store at `destination`, as a store argument and the configuration
    /// that opens it: a SQLite file for SQLite and PostgreSQL, an LMDB directory for LMDB.
    static func backupStore(_ kind: EngineKind, _ destination: URL) -> (argument: String, EngineConfiguration) {
        kind == .lmdb
            ? ("lmdb:" + destination.path, .lmdb(at: destination))
            : ("sqlite:" + destination.path, .sqlite(at: destination))
    }

    @Test(
        "a backup taken while a writer process saves opens, verifies sound and holds a prefix of its commits",
        arguments: EngineKind.sharedAcrossProcesses)
    func backupUnderLoad(kind: EngineKind) async throws {
        try StrataCommandRun.requireBuilt()
        let store = try TestStore(kind)
        let writer = try ToolWriterProcess(kind: kind, location: store.configuration.location)
        try await writer.waitPast(40)
        let before = writer.acknowledged
        let destination = store.directory.appendingPathComponent("backup")
        let run = try await StrataCommandRun.run([
            "backup", try StrataCommandRun.argument(for: store), destination.path,
        ])
        let after = writer.acknowledged
        try await writer.waitPast(after + 10) // still writing after the backup: it never stopped the writer
        writer.stop()
        try #require(run.status == 0, "\(run.error)")
        #expect(run.error.isEmpty, "progress or noise on a pipe: \(run.error)")

        let (argument, configuration) = Self.backupStore(kind, destination)
        let verify = try await StrataCommandRun.run(["verify", argument])
        #expect(verify.status == 0, "\(verify.output)\(verify.error)")
        let (highest, problems) = try await CrashStoreCheck.prefixProblems(
            configuration, atLeast: before, atMost: writer.acknowledged + 2)
        #expect(problems.isEmpty, "\(problems)")
        #expect(highest >= before && highest > 0)
        if kind != .postgres {
            // The file engines' backups are whole stores: history included.
            let inspect = try await StrataCommandRun.run(["inspect", argument, "--json"])
            let history = try #require(try inspect.json()["history"] as? [String: Any])
            #expect((history["transactions"] as? Int ?? 0) >= Int(highest / 2), "\(history)")
        }
    }

    @Test(
        "a backup refuses a DEST that exists, with status 10, and leaves it as it was",
        arguments: EngineKind.sharedAcrossProcesses)
    func backupRefusesAnExistingDestination(kind: EngineKind) async throws {
        let store = try await ToolFixture.seededStore(kind)
        let destination = store.directory.appendingPathComponent("taken")
        try Data("mine".utf8).write(to: destination)
        let run = try await StrataCommandRun.run([
            "backup", try StrataCommandRun.argument(for: store), destination.path,
        ])
        #expect(run.status == 10, "\(run.error)")
        #expect(run.error.hasPrefix("strata: ") && run.error.contains("not empty"), "\(run.error)")
        #expect(try Data(contentsOf: destination) == Data("mine".utf8))
    }
}
