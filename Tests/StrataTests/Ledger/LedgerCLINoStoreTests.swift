import Foundation
import Testing

extension LedgerTests {
    /// A read-only command on a path that holds no store fails and creates nothing, on every
    /// file engine: a SQLite file that is not there, an LMDB directory without LMDB's files.
    @Suite("ledger CLI: no store")
    struct LedgerCLINoStoreTests {
        @Test(
            "account list where no store is says so (exit 1) and leaves the directory empty",
            arguments: EngineKind.fileEngines)
        func readOnlyCommandCreatesNothing(kind: EngineKind) async throws {
            let binary = try LedgerCLIMigrationTests.ledgerBinary()
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
                "ledger-cli-no-store-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            // An LMDB store is a directory: an existing, empty one. A SQLite store is a file in it.
            let store = kind == .lmdb ? directory : directory.appendingPathComponent("ledger.sqlite")
            let run = try await BenchmarkBinary.run(
                binary, ["--engine", kind.rawValue, "--store", store.path, "account", "list"])
            #expect(run.status == 1, "exit \(run.status): \(run.output)\(run.errorOutput)")
            #expect(run.errorOutput.contains("No ledger store at \(store.path)"), "\(run.errorOutput)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).isEmpty)
        }

        @Test("--engine lmdb on a file (a SQLite ledger) gets the engine's own message, not \"No ledger store\"")
        func lmdbOnAFile() async throws {
            let binary = try LedgerCLIMigrationTests.ledgerBinary()
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
                "ledger-cli-no-store-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let file = directory.appendingPathComponent("ledger.sqlite")
            try Data("not an LMDB directory".utf8).write(to: file)
            let run = try await BenchmarkBinary.run(
                binary, ["--engine", "lmdb", "--store", file.path, "account", "list"])
            #expect(run.status != 0, "\(run.output)")
            #expect(!run.errorOutput.contains("No ledger store"), "\(run.errorOutput)")
            #expect(run.errorOutput.contains("directory"), "\(run.errorOutput)")
        }
    }
}
