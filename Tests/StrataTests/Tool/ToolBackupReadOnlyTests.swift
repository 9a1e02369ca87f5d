import Foundation
import Strata
import Testing

/// `strata backup` of an LMDB store this process cannot write (read-only media, another user's
/// store): LMDB needs `lock.mdb` writable even to read, so the backup opens such a store
/// read-only, and without LMDB's locks only when no other process has it open.
@Suite("strata backup: a read-only LMDB store")
struct ToolBackupReadOnlyTests {
    /// What is read-only in the store directory (the directory itself always is).
    enum Layout: String, CaseIterable, CustomTestStringConvertible {
        /// Every file read-only, `lock.mdb` left from the last open: a read without LMDB's locks.
        case lockFileKept = "every file read-only, lock.mdb kept"
        /// Copied onto read-only media without its `lock.mdb`: a read without LMDB's locks.
        case noLockFile = "no lock.mdb"
        /// Only `data.mdb` read-only: `MDB_RDONLY` with LMDB's locks.
        case lockFileWritable = "data.mdb read-only, lock.mdb writable"

        var testDescription: String { rawValue }
    }

    /// Runs `strata ARGUMENTS…` as a user who cannot write the store: as `nobody` when the tests
    /// run as root (root writes files whatever their modes say), else as this user.
    static func runUnprivileged(_ arguments: [String]) async throws -> StrataCommandRun {
        try StrataCommandRun.requireBuilt()
        guard getuid() == 0 else { return try await StrataCommandRun.run(arguments) }
        return try await StrataCommandRun.run(
            executable: URL(fileURLWithPath: "/usr/sbin/runuser"),
            ["-u", "nobody", "--", StrataCommandRun.url.path] + arguments)
    }

    /// Sets the modes of the store directory's entries and of the directory, per `modes`.
    static func setModes(_ directory: URL, _ modes: [String: Int16], directoryMode: Int16) throws {
        for (name, mode) in modes {
            try FileManager.default.setAttributes(
                [.posixPermissions: mode], ofItemAtPath: directory.appendingPathComponent(name).path)
        }
        try FileManager.default.setAttributes([.posixPermissions: directoryMode], ofItemAtPath: directory.path)
    }

    /// The LMDB store's directory (seeded, or left for a writer process to create), and an empty
    /// directory anybody can write, for the backup.
    static func storeAndOutput(seeded: Bool = true) async throws -> (TestStore, URL, URL) {
        let store = seeded ? try await ToolFixture.seededStore(.lmdb) : try TestStore(.lmdb)
        let output = store.directory.appendingPathComponent("out")
        try FileManager.default.createDirectory(at: output, withIntermediateDirectories: false)
        try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: output.path)
        return (store, store.directory.appendingPathComponent("store.lmdb"), output)
    }

    @Test("backs up a store whose files cannot be written, and the backup verifies sound", arguments: Layout.allCases)
    func readOnlyStore(layout: Layout) async throws {
        let (store, directory, output) = try await Self.storeAndOutput()
        let lock = directory.appendingPathComponent("lock.mdb")
        if layout == .noLockFile { try FileManager.default.removeItem(at: lock) }
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        var modes = Dictionary(uniqueKeysWithValues: names.map { ($0, Int16(0o444)) })
        if layout == .lockFileWritable { modes["lock.mdb"] = 0o666 }
        let data = try Data(contentsOf: directory.appendingPathComponent("data.mdb"))
        try Self.setModes(directory, modes, directoryMode: 0o555)
        defer { try? Self.setModes(directory, modes.mapValues { _ in 0o644 }, directoryMode: 0o755) }

        let backup = output.appendingPathComponent("backup")
        let run = try await Self.runUnprivileged(["backup", "lmdb:" + directory.path, backup.path])
        #expect(run.status == 0, "exit \(run.status): \(run.error)")
        #expect(run.output.contains("backed up"), "\(run.output)")
        #expect(try Data(contentsOf: directory.appendingPathComponent("data.mdb")) == data, "the store changed")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() == names.sorted())

        let verify = try await StrataCommandRun.run(["verify", "lmdb:" + backup.path])
        #expect(verify.status == 0, "\(verify.output)\(verify.error)")
        let copied = try await StrataCommandRun.run(["inspect", "lmdb:" + backup.path, "--json"]).json()
        let entities = try #require(copied["entities"] as? [[String: Any]], "\(copied)")
        #expect(entities.contains { $0["name"] as? String == "Entry" && $0["rows"] as? Int == 3 }, "\(entities)")
        _ = store
    }

    @Test("refuses a store whose lock.mdb it cannot write while another process has the store open (exit 9)")
    func storeInUse() async throws {
        let (store, directory, output) = try await Self.storeAndOutput(seeded: false)
        let writer = try ToolWriterProcess(kind: .lmdb, location: directory)
        defer { writer.stop() }
        try await writer.waitPast(5)
        // The writer has lock.mdb open already; this process may no longer write it.
        let lock = directory.appendingPathComponent("lock.mdb")
        try FileManager.default.setAttributes([.posixPermissions: 0o444], ofItemAtPath: lock.path)
        try FileManager.default.setAttributes([.posixPermissions: 0o555], ofItemAtPath: directory.path)
        defer {
            try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: directory.path)
            try? FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: lock.path)
        }
        let backup = output.appendingPathComponent("backup")
        let run = try await Self.runUnprivileged(["backup", "lmdb:" + directory.path, backup.path])
        #expect(run.status == 9, "exit \(run.status): \(run.error)")
        #expect(
            run.error.contains(lock.path) && run.error.contains("another process has the store open"), "\(run.error)")
        #expect(!FileManager.default.fileExists(atPath: backup.path), "a refused backup left \(backup.path)")
        try await writer.waitPast(writer.acknowledged + 5) // the writer was not disturbed
        _ = store
    }
}
