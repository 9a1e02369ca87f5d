import Foundation
import Strata
import StrataStorage

/// Damaged store files give typed errors at open — never a crash — and are left as they were.
///
/// A store that keeps no files (a server engine's schema) is damaged through its configuration's
/// `storeContents` hook instead: each part it exposes is overwritten, and the same expectations
/// hold (open gives `.notAStore`, and the failed open leaves every part as written).
///
/// A store without files (``EngineCapabilities/hasStoreFiles`` false, no `storeContents` hook: an
/// in-memory store) has nothing to damage: the checks assert that using it wrote no file at all,
/// anywhere in the check's directory, and that its `location` is no file URL, so no tool can
/// mistake it for a path to copy or back up.
enum StoreFileChecks {
    static let all: [ConformanceCheck] = [
        ConformanceCheck(
            "Bad store files", "a store whose files are overwritten with garbage gives a typed error", garbage),
        ConformanceCheck("Bad store files", "a store whose files are emptied gives a typed error", empty),
    ]

    /// Every regular file of the store: the location itself, or the files inside it; none for a
    /// location that is not a file URL (a store without files).
    static func storeFiles(_ location: URL) -> [URL] {
        guard location.isFileURL else { return [] }
        guard let values = try? location.resourceValues(forKeys: [.isDirectoryKey]) else { return [] }
        if values.isDirectory != true { return [location] }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: location.path)) ?? []
        return names.sorted().map { location.appendingPathComponent($0) }
    }

    static func damage(_ kit: ConformanceHarness, with bytes: (Int) -> Data, _ what: String) async throws {
        do {
            let container = try kit.open()
            _ = try await container.makeAccount("Precious", balance: 1)
        }
        if let contents = kit.configuration.storeContents {
            try damageContents(kit, contents, with: bytes, what)
        } else if !kit.capabilities.hasStoreFiles {
            try await expectNoFiles(kit)
        } else {
            try damageFiles(kit, with: bytes, what)
        }
    }

    /// Overwrites every file of the store, then checks the open and that the files are unchanged.
    static func damageFiles(_ kit: ConformanceHarness, with bytes: (Int) -> Data, _ what: String) throws {
        let files = storeFiles(kit.configuration.location).filter { !$0.lastPathComponent.hasPrefix(".") }
        try kit.expect(!files.isEmpty, "the engine left no files at \(kit.configuration.location.path)")
        var written: [URL: Data] = [:]
        for file in files {
            let size = (try? FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int) ?? 0
            let replacement = bytes(size)
            try replacement.write(to: file)
            written[file] = replacement
        }
        try expectNotAStore(kit, what)
        for (file, content) in written {
            try kit.expect(
                (try? Data(contentsOf: file)) == content, "\(file.lastPathComponent) was changed by the failed open")
        }
    }

    /// Overwrites every part the engine's `storeContents` hook exposes, then checks the open and
    /// that the parts read back as the damage left them. (A part may not hold any bytes at all,
    /// a text column holds no NUL, so the damage is what reads back after the write, and it
    /// must differ from the store as it was.)
    static func damageContents(
        _ kit: ConformanceHarness, _ contents: StoreContents, with bytes: (Int) -> Data, _ what: String
    ) throws {
        let parts = try contents.read()
        try kit.expect(!parts.isEmpty, "the engine's storeContents hook exposed no parts of the store")
        try contents.write(parts.map { bytes($0.count) })
        let damaged = try contents.read()
        try kit.expect(damaged != parts, "the storeContents hook's write changed no part of the store")
        try expectNotAStore(kit, what)
        let after = try contents.read()
        try kit.expectEqual(after.count, damaged.count, "the number of store parts after the failed open")
        for (index, (content, expected)) in zip(after, damaged).enumerated() {
            try kit.expect(content == expected, "store part \(index) was changed by the failed open")
        }
    }

    /// A store without files wrote none: the check's directory is as the harness made it (empty),
    /// the configuration's location is not a file URL, and the store still holds what was saved.
    static func expectNoFiles(_ kit: ConformanceHarness) async throws {
        let location = kit.configuration.location
        try kit.expect(
            !location.isFileURL, "an engine without store files gives a file URL as its location: \(location)")
        let written = (try? FileManager.default.subpathsOfDirectory(atPath: kit.directory.path)) ?? []
        try kit.expectEqual(written, [], "the files an engine without store files wrote in the check's directory")
        let names = try await kit.open().read { try $0.fetch(FetchRequest<KitAccount>()).map(\.name) }
        try kit.expectEqual(names, ["Precious"], "the accounts of the store, reopened while the harness keeps it")
    }

    /// Opening the damaged store must fail with `.notAStore`.
    static func expectNotAStore(_ kit: ConformanceHarness, _ what: String) throws {
        let error = try kit.expectStrataError("opening a store whose files were \(what)", sync: { _ = try kit.open() })
        // Files that hold no store at all are not a damaged store: `.notAStore`, never
        // `.storeCorrupt` (which tells the user to restore a backup of data that was never there).
        guard case .notAStore = error else {
            throw kit.fail("opening a store whose files were \(what): expected notAStore, got \(error)")
        }
    }

    static func garbage(_ kit: ConformanceHarness) async throws {
        try await damage(
            kit, with: { size in Data((0..<max(size, 4096)).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ 17) }) },
            "overwritten with garbage")
    }

    static func empty(_ kit: ConformanceHarness) async throws {
        try await damage(kit, with: { _ in Data() }, "emptied")
    }
}
