import Foundation
import Strata
import Testing

@Suite("strata backup: DEST")
struct ToolBackupDestinationTests {
    @Test(
        "a DEST in a missing directory is blamed on DEST, not the source (exit 9)",
        arguments: EngineKind.fileEngines)
    func missingDirectory(kind: EngineKind) async throws {
        let store = try await ToolFixture.seededStore(kind)
        let destination = store.directory.appendingPathComponent("nodir/backup")
        let source = try StrataCommandRun.argument(for: store)
        let run = try await StrataCommandRun.run(["backup", source, destination.path])
        #expect(run.status == 9, "exit \(run.status): \(run.error)")
        #expect(run.error.contains(destination.path), "\(run.error)")
        #expect(run.error.contains("check that the directory exists and is writable"), "\(run.error)")
        #expect(!run.error.contains(source.drop { $0 != ":" }.dropFirst()), "\(run.error)")
    }
}
