import Foundation
import Strata
import Testing

@Suite("strata verify: a sound store that cannot be written")
struct ToolVerifyUnwritableTests {
    /// The file of `store` whose writes its engine's open needs.
    static func mainFile(of store: TestStore) -> URL {
        store.kind == .lmdb
            ? store.directory.appendingPathComponent("store.lmdb/data.mdb")
            : store.directory.appendingPathComponent("store.sqlite")
    }

    /// Makes `file` unwritable even for root (`chattr +i`), or by its mode for another user.
    static func makeUnwritable(_ file: URL) throws {
        if getuid() == 0 {
            try ToolDamage.shell("chattr", ["+i", file.path])
        } else {
            try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: file.path)
        }
    }

    static func makeWritable(_ file: URL) throws {
        if getuid() == 0 {
            try ToolDamage.shell("chattr", ["-i", file.path])
        } else {
            try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: file.path)
        }
    }

    @Test(
        "is an I/O failure (exit 9, one line on standard error), not NOT SOUND",
        arguments: EngineKind.fileEngines)
    func unwritableStoreIsAnIOFailure(kind: EngineKind) async throws {
        let store = try await ToolFixture.seededStore(kind)
        let file = Self.mainFile(of: store)
        try Self.makeUnwritable(file)
        defer { try? Self.makeWritable(file) }
        let run = try await StrataCommandRun.run(["verify", try StrataCommandRun.argument(for: store)])
        #expect(run.status == 9, "exit \(run.status): \(run.output)\(run.error)")
        #expect(!run.output.contains("NOT SOUND"), "\(run.output)")
        #expect(run.error.hasPrefix("strata: ") && run.error.contains("cannot"), "\(run.error)")
    }
}
