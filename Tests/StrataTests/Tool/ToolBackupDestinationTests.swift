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

    @Test(
        "a DEST ending in / where nothing is: an LMDB backup's directory; for SQLite, blamed on DEST (exit 9)",
        arguments: EngineKind.fileEngines)
    func missingDirectoryWithSlash(kind: EngineKind) async throws {
        let store = try await ToolFixture.seededStore(kind)
        let destination = store.directory.appendingPathComponent("new").path + "/"
        let source = try StrataCommandRun.argument(for: store)
        let run = try await StrataCommandRun.run(["backup", source, destination])
        if kind == .lmdb {
            #expect(run.status == 0, "exit \(run.status): \(run.error)")
            let verify = try await StrataCommandRun.run(["verify", "lmdb:" + destination])
            #expect(verify.status == 0, "\(verify.output)\(verify.error)")
            return
        }
        // Before, SQLite's backup failed on its temporary file inside the missing directory, and
        // the message named the source.
        #expect(run.status == 9, "exit \(run.status): \(run.error)")
        #expect(run.error.contains(destination) && run.error.contains("trailing"), "\(run.error)")
        #expect(!run.error.contains(source.drop { $0 != ":" }.dropFirst()), "\(run.error)")
        #expect(!FileManager.default.fileExists(atPath: destination))
    }

    @Test(
        "an empty directory as DEST is refused as a directory (exit 10), not as a DEST that is not empty",
        arguments: EngineKind.fileEngines)
    func emptyDirectory(kind: EngineKind) async throws {
        let store = try await ToolFixture.seededStore(kind)
        let destination = store.directory.appendingPathComponent("empty")
        try FileManager.default.createDirectory(at: destination, withIntermediateDirectories: false)
        let run = try await StrataCommandRun.run([
            "backup", try StrataCommandRun.argument(for: store), destination.path + "/",
        ])
        #expect(run.status == 10, "exit \(run.status): \(run.error)")
        #expect(run.error.contains("is a directory") && !run.error.contains("not empty"), "\(run.error)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: destination.path).isEmpty)
    }

    @Test(
        "DEST named as a store of the backup's engine is written at its path; another engine's is refused",
        arguments: EngineKind.fileEngines)
    func engineNamedDestination(kind: EngineKind) async throws {
        let store = try await ToolFixture.seededStore(kind)
        let source = try StrataCommandRun.argument(for: store)
        let destination = store.directory.appendingPathComponent("named")
        let named = kind.rawValue + ":" + destination.path
        let run = try await StrataCommandRun.run(["backup", source, named])
        #expect(run.status == 0, "exit \(run.status): \(run.error)")
        #expect(FileManager.default.fileExists(atPath: destination.path))
        let verify = try await StrataCommandRun.run(["verify", named])
        #expect(verify.status == 0, "\(verify.output)\(verify.error)")

        let other = (kind == .lmdb ? "sqlite:" : "lmdb:") + store.directory.appendingPathComponent("other").path
        let refused = try await StrataCommandRun.run(["backup", source, other])
        #expect(refused.status == 2, "exit \(refused.status): \(refused.error)")
        #expect(refused.error.contains("strata copy"), "\(refused.error)")
        #expect(!FileManager.default.fileExists(atPath: store.directory.appendingPathComponent("other").path))
    }

    @Test(
        "a symbolic link as DEST, even a dangling one, is taken (exit 10) and left as it is",
        arguments: EngineKind.fileEngines)
    func symbolicLinkDestination(kind: EngineKind) async throws {
        let store = try await ToolFixture.seededStore(kind)
        let destination = store.directory.appendingPathComponent("link")
        let target = store.directory.appendingPathComponent("nowhere")
        try FileManager.default.createSymbolicLink(at: destination, withDestinationURL: target)
        let run = try await StrataCommandRun.run([
            "backup", try StrataCommandRun.argument(for: store), destination.path,
        ])
        #expect(run.status == 10, "exit \(run.status): \(run.error)")
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: destination.path) == target.path)
        #expect(!FileManager.default.fileExists(atPath: target.path))
    }
}
