import Foundation
import Strata

/// Damaged store files give typed errors at open — never a crash — and are left as they were.
enum StoreFileChecks {
    static let all: [ConformanceCheck] = [
        ConformanceCheck(
            "Bad store files", "a store whose files are overwritten with garbage gives a typed error", garbage),
        ConformanceCheck("Bad store files", "a store whose files are emptied gives a typed error", empty),
    ]

    /// Every regular file of the store: the location itself, or the files inside it.
    static func storeFiles(_ location: URL) -> [URL] {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: location.path, isDirectory: &isDirectory) else { return [] }
        if !isDirectory.boolValue { return [location] }
        let names = (try? FileManager.default.contentsOfDirectory(atPath: location.path)) ?? []
        return names.sorted().map { location.appendingPathComponent($0) }
    }

    static func damage(_ kit: ConformanceHarness, with bytes: (Int) -> Data, _ what: String) async throws {
        do {
            let container = try kit.open()
            _ = try await container.makeAccount("Precious", balance: 1)
        }
        let files = storeFiles(kit.configuration.location).filter { !$0.lastPathComponent.hasPrefix(".") }
        try kit.expect(!files.isEmpty, "the engine left no files at \(kit.configuration.location.path)")
        var written: [URL: Data] = [:]
        for file in files {
            let size = (try? FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int) ?? 0
            let replacement = bytes(size)
            try replacement.write(to: file)
            written[file] = replacement
        }
        let error = try kit.expectStrataError("opening a store whose files were \(what)", sync: { _ = try kit.open() })
        // Files that hold no store at all are not a damaged store: `.notAStore`, never
        // `.storeCorrupt` (which tells the user to restore a backup of data that was never there).
        guard case .notAStore = error else {
            throw kit.fail("opening a store whose files were \(what): expected notAStore, got \(error)")
        }
        for (file, content) in written {
            try kit.expect(
                (try? Data(contentsOf: file)) == content, "\(file.lastPathComponent) was changed by the failed open")
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
