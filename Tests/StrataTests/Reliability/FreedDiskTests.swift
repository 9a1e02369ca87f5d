import Foundation
import Strata
import Testing

/// A store whose disk filled up works again once some space is freed: it opens and reads while
/// the disk is full, and after less space was freed than the write-ahead log's checkpoint would
/// take, a fresh process and a process that met the full disk both write again; nothing
/// acknowledged is lost.
///
/// On SQLite a fresh process once kept getting `.storeFull`: the automatic checkpoint at its
/// first commit grew the database file by the log's pages until the disk was full again, and
/// the commit's own log frames then found no room (see `SQLiteEngine+Checkpoint.swift`).
///
/// The disk is a small tmpfs, as in ``FullDiskTests``, or an ext4 volume on a loop device; both
/// need root, and ext4 also needs a free loop device (`/dev/loop*`), which some containers lack.
@Suite("freed disk", .serialized)
struct FreedDiskTests {
    enum FileSystem: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case tmpfs
        case ext4

        var testDescription: String { rawValue }
    }

    /// Runs `body` with a fresh volume of `megabytes` mounted at a temporary directory.
    static func withDisk(_ system: FileSystem, megabytes: Int, _ body: (URL) async throws -> Void) async throws {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("strata-freed-\(UUID().uuidString)")
        let image = base.appendingPathExtension("img")
        try FileManager.default.createDirectory(at: base, withIntermediateDirectories: true)
        defer {
            try? FileManager.default.removeItem(at: base)
            try? FileManager.default.removeItem(at: image)
        }
        switch system {
        case .tmpfs:
            try #require(
                FullDiskTests.run("/bin/mount", ["-t", "tmpfs", "-o", "size=\(megabytes)m", "tmpfs", base.path]) == 0,
                "mounting a tmpfs needs root")
        case .ext4:
            try #require(FullDiskTests.run("/usr/bin/truncate", ["-s", "\(megabytes)M", image.path]) == 0)
            try #require(FullDiskTests.run("/sbin/mkfs.ext4", ["-q", "-F", image.path]) == 0, "mkfs.ext4 is needed")
            try #require(
                FullDiskTests.run("/bin/mount", ["-o", "loop", image.path, base.path]) == 0,
                "mounting an ext4 image needs root and a free loop device")
        }
        defer { _ = FullDiskTests.run("/bin/umount", ["-l", base.path]) }
        try await body(base)
    }

    @Test(
        "after a full disk, freeing a little space lets a fresh process and the same process write again",
        arguments: EngineKind.fileEngines, FileSystem.allCases)
    func freedDisk(kind: EngineKind, system: FileSystem) async throws {
        try LifetimeProbe.requireBuilt()
        try await Self.withDisk(system, megabytes: 24) { disk in
            let directory = disk.appendingPathComponent("store")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            // Freed later: 1 MiB first (less than a checkpoint of the log needs), then the rest.
            let little = disk.appendingPathComponent("little")
            let rest = disk.appendingPathComponent("rest")
            #expect(FileManager.default.createFile(atPath: little.path, contents: Data(count: 1 << 20)))
            #expect(FileManager.default.createFile(atPath: rest.path, contents: Data(count: 8 << 20)))
            let configuration = kind.configuration(in: directory)
            let location = configuration.location

            // Another process fills the disk and dies there.
            let filling = try LifetimeProbe("fill-until-full", engine: kind.rawValue, store: location, ["name": "f"])
            let first = filling.nextLine() ?? ""
            let second = filling.nextLine() ?? ""
            filling.stop()
            var saved = try #require(first.hasPrefix("ok ") ? Int(first.dropFirst(3)) : nil, "\(first) | \(second)")
            #expect(second.hasPrefix("error storeFull"), "\(second)")

            // The full store opens and reads; a write may or may not find room.
            let schema = try CreationRaceItem.probeSchema()
            let container = try PersistentContainer(schema: schema, engine: configuration)
            defer { container.close() }
            #expect(try await SharedStoreTests.count(in: container) == saved, "reading the store on the full disk")
            do {
                try await SharedStoreTests.save("while-full", in: container)
                saved += 1
            } catch StrataError.storeFull {}

            try FileManager.default.removeItem(at: little)
            let fresh = try LifetimeProbe("open-write", engine: kind.rawValue, store: location, ["name": "fresh"])
            let lines = await fresh.collectRemainingLines()
            #expect(lines == ["ok"], "a fresh process after 1 MiB was freed: \(lines)")
            if lines == ["ok"] { saved += 1 }
            for round in 0..<3 {
                try await SharedStoreTests.save("same-\(round)", in: container)
                saved += 1
            }

            try FileManager.default.removeItem(at: rest)
            for round in 0..<3 {
                try await SharedStoreTests.save("after-\(round)", in: container)
                saved += 1
            }
            #expect(try await SharedStoreTests.count(in: container) == saved)
            let reopened = try PersistentContainer(schema: schema, engine: configuration)
            defer { reopened.close() }
            let count = try await SharedStoreTests.count(in: reopened)
            #expect(count == saved, "the store holds \(count) items; \(saved) saves were acknowledged")
        }
    }
}
