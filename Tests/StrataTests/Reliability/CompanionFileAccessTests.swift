import Foundation
import Strata
import StrataLMDB
import StrataSQLite
import Testing

/// A store whose main file is fine but one of whose companion files (SQLite's `-wal` or `-shm`,
/// LMDB's `lock.mdb`) this process cannot write, perhaps another user's: the open fails with
/// `.io` naming that file, its owner and what to do, and keeps the engine's native code.
@Suite("a companion file the process cannot write")
struct CompanionFileAccessTests {
    /// The companion files of a `kind` store at `location`, each made unwritable in turn.
    static func companions(_ kind: EngineKind, _ location: URL) -> [String] {
        kind == .lmdb
            ? [location.appendingPathComponent("lock.mdb").path] : [location.path + "-wal", location.path + "-shm"]
    }

    @Test(
        "the open's .io names the companion file that cannot be written, not the store (as an unprivileged user)",
        // Not PostgreSQL or memory: no files of their own.
        arguments: EngineKind.fileEngines)
    func namesTheFile(kind: EngineKind) async throws {
        for index in 0..<(kind == .lmdb ? 1 : 2) {
            let store = try TestStore(kind)
            let location = try await BadInputTests.makeStore(store)
            try await Self.expectNamed(kind, location: location, companion: Self.companions(kind, location)[index])
        }
    }

    /// Makes `companion` unwritable (every other file of the store writable for the child, which
    /// runs as `nobody` when the tests run as root) and opens the store in a child process.
    static func expectNamed(_ kind: EngineKind, location: URL, companion: String) async throws {
        let directory = kind == .lmdb ? location : location.deletingLastPathComponent()
        var files = try FileManager.default.contentsOfDirectory(atPath: directory.path).map {
            directory.appendingPathComponent($0).path
        }
        if kind == .sqlite {
            // Both companions exist, so that only the unwritable one can fail.
            for file in [location.path + "-wal", location.path + "-shm"] where !files.contains(file) {
                try Data().write(to: URL(fileURLWithPath: file))
                files.append(file)
            }
        }
        let root = getuid() == 0
        for file in files {
            if root && file != companion {
                try FileManager.default.setAttributes([.ownerAccountID: 65534], ofItemAtPath: file)
            }
            try FileManager.default.setAttributes(
                [.posixPermissions: file == companion ? 0o444 : 0o666], ofItemAtPath: file)
        }
        // SQLite's directory may not be written, or it would delete a companion it cannot open
        // and make it anew; LMDB's is the store's, owned by the child's user.
        if kind == .lmdb, root {
            try FileManager.default.setAttributes([.ownerAccountID: 65534], ofItemAtPath: directory.path)
        }
        try FileManager.default.setAttributes(
            [.posixPermissions: kind == .lmdb ? 0o755 : 0o555], ofItemAtPath: directory.path)
        defer { try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: directory.path) }
        let result = try await #require(processExitsWith: .success, observing: [\.standardOutputContent]) {
            [kind = kind as EngineKind, path = location.path as String] in
            // Root ignores permission bits: drop to an unprivileged user first.
            if getuid() == 0 {
                guard setgid(65534) == 0, setuid(65534) == 0 else { exit(3) }
            }
            let url = URL(fileURLWithPath: path)
            let outcome: String
            do {
                let container = try PersistentContainer(
                    schema: TestModels.schema, engine: kind == .lmdb ? .lmdb(at: url) : .sqlite(at: url))
                try await container.performUnitOfWork { context in
                    Account(context: context).name = "Intruder"
                    try context.save()
                }
                outcome = "the write succeeded"
            } catch StrataError.io(let detail, let native) {
                outcome = "io \(native?.engine ?? "no engine") \(native?.code ?? 0): \(detail)"
            } catch {
                outcome = "expected StrataError.io, got \(String(reflecting: error))"
            }
            FileHandle.standardOutput.write(Data(outcome.utf8))
            exit(0)
        }
        let outcome = String(decoding: result.standardOutputContent, as: UTF8.self)
        #expect(outcome.hasPrefix("io \(kind.rawValue) "), "\(outcome)")
        #expect(
            outcome.contains("cannot open the store's") && outcome.contains(companion + " for writing"), "\(outcome)")
        #expect(outcome.contains("mode 0444") && outcome.contains("give this process write access"), "\(outcome)")
    }
}
