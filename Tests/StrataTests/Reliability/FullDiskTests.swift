import Foundation
import Strata
import StrataTestSupport
import Testing

/// A store on a full disk (a 2 MiB tmpfs) reports `.storeFull`, writes nothing of the failed
/// save, and stays readable. Mounting needs root, which the tests have here and in CI.
@Suite("full disk", .serialized)
struct FullDiskTests {
    /// Runs `body` with a fresh 2 MiB tmpfs mounted at a temporary directory.
    static func withSmallDisk(_ body: (URL) async throws -> Void) async throws {
        try await withDisk(size: "2m", body)
    }

    /// Runs `body` with a fresh tmpfs of `size` (as `mount` takes it: `2m`, `48k`) mounted at a
    /// temporary directory.
    static func withDisk(size: String, _ body: (URL) async throws -> Void) async throws {
        let mountPoint = FileManager.default.temporaryDirectory.appendingPathComponent(
            "strata-full-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: mountPoint, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: mountPoint) }
        try #require(
            run("/bin/mount", ["-t", "tmpfs", "-o", "size=\(size)", "tmpfs", mountPoint.path]) == 0,
            "mounting a tmpfs needs root")
        defer { _ = run("/bin/umount", ["-l", mountPoint.path]) }
        try await body(mountPoint)
    }

    static func run(_ tool: String, _ arguments: [String]) -> Int32 {
        let process = SpawnedProcess()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        process.standardError = FileHandle.nullDevice
        do { try process.run() } catch { return -1 }
        process.waitUntilExit()
        return process.terminationStatus
    }

    @Test(
        "a full disk gives storeFull, nothing of the failed save, and a readable store",
        // Not PostgreSQL: the tmpfs holds the client's files only; the server's disk is its own.
        arguments: EngineKind.fileEngines)
    func fullDisk(kind: EngineKind) async throws {
        try await Self.withSmallDisk { disk in
            let configuration = kind.configuration(in: disk)
            var saved = 0
            var failure: (any Error)?
            do {
                let container = try PersistentContainer(schema: TestModels.schema, engine: configuration)
                defer { container.close() }
                for batch in 0..<200 {
                    try await container.performUnitOfWork(retries: .none) { context in
                        for index in 0..<20 {
                            let account = Account(context: context)
                            account.name = "b\(batch)-\(index)"
                            account.note = String(repeating: "x", count: 2_000)
                        }
                        try context.save()
                    }
                    saved += 20
                }
            } catch {
                failure = error
            }
            print("full disk \(kind): \(saved) accounts saved, then \(String(describing: failure))")
            guard case StrataError.storeFull? = failure else {
                Issue.record("expected .storeFull on a full disk, got \(String(describing: failure))")
                return
            }
            #expect(saved > 0)
            let reopened = try PersistentContainer(schema: TestModels.schema, engine: configuration)
            defer { reopened.close() }
            let context = reopened.newBackgroundContext()
            let count = try await context.perform { try context.count(for: FetchRequest<Account>()) }
            #expect(count == saved, "the store holds \(count) accounts; \(saved) saves were acknowledged")
        }
    }
}
