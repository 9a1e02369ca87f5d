import Foundation
import Strata
import Testing

/// LMDB trusts its pages: before the page audit, `strata verify` on a store with one damaged
/// B-tree page stopped with LMDB's assertion `IS_LEAF(mp)`, a segmentation fault, or looped
/// until killed. Now the pages are checked from the file first, and a damaged one is reported.
@Suite("strata verify: a damaged LMDB page")
struct ToolVerifyPageDamageTests {
    /// The ways a page is damaged here.
    enum Damage: String, CaseIterable, Sendable {
        /// The whole page zeroed (a lost write).
        case zeroed
        /// Its type flags cleared.
        case typeCleared
        /// Its own page number changed (a page written to the wrong place).
        case misplaced
        /// Its node area overwritten with other bytes.
        case scrambledNodes
    }

    /// An LMDB store of 3,000 entries in one commit: its pages in the middle third are leaves
    /// and branches of its tables and indexes, none of them free.
    static func store() async throws -> TestStore {
        let store = try TestStore(.lmdb)
        let container = try store.open()
        let context = container.newBackgroundContext()
        try await context.perform {
            let account = Account(context: context)
            account.name = "Checking"
            for index in 0..<3_000 {
                let entry = Entry(context: context)
                entry.amount = Int64(index)
                entry.memo = "entry number \(index), with a memo long enough to fill pages"
                entry.account = account
            }
            try context.save()
        }
        container.close()
        return store
    }

    /// Damages page `page` of the store's data file.
    static func damage(_ store: TestStore, page: Int, _ damage: Damage) throws {
        let path = store.directory.appendingPathComponent("store.lmdb/data.mdb").path
        let file = try #require(FileHandle(forUpdatingAtPath: path))
        defer { try? file.close() }
        let start = UInt64(page * 4096)
        switch damage {
        case .zeroed:
            try file.seek(toOffset: start)
            try file.write(contentsOf: Data(count: 4096))
        case .typeCleared:
            try file.seek(toOffset: start + 10)
            try file.write(contentsOf: Data([0, 0]))
        case .misplaced:
            try file.seek(toOffset: start)
            // The page number field (8 bytes, little-endian) names the next page.
            let number = UInt64(page + 1)
            try file.write(contentsOf: Data((0..<8).map { UInt8(truncatingIfNeeded: number >> ($0 * 8)) }))
        case .scrambledNodes:
            try file.seek(toOffset: start + 16)
            try file.write(contentsOf: Data((0..<64).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }))
        }
    }

    /// The first page from `start` whose header carries its own number and the type of a branch
    /// or leaf page (not a page inside a run of overflow pages, which has no header).
    static func treePage(from start: Int, in path: String) throws -> Int {
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        for page in start..<(bytes.count / 4096) {
            let header = bytes[(page * 4096)..<(page * 4096 + 16)]
            let number = header.prefix(8).reversed().reduce(0) { $0 << 8 | Int($1) }
            let type = Int(header[header.startIndex + 10]) & 0x07
            if number == page && (type == 1 || type == 2) { return page }
        }
        throw CocoaError(.fileReadCorruptFile)
    }

    @Test("each damaged page is reported, and verify exits 1 instead of crashing", arguments: Damage.allCases)
    func damagedPage(damage: Damage) async throws {
        let store = try await Self.store()
        let path = store.directory.appendingPathComponent("store.lmdb/data.mdb").path
        let pages = try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) / 4096
        try #require(pages > 100, "the store has \(pages) pages")
        for page in try [pages / 3, pages / 2, 2 * pages / 3].map({ try Self.treePage(from: $0, in: path) }) {
            let damaged = try await Self.store()
            try Self.damage(damaged, page: page, damage)
            let run = try await StrataCommandRun.run(["verify", try StrataCommandRun.argument(for: damaged), "--json"])
            #expect(run.status == 1, "page \(page): exit \(run.status): \(run.error)")
            let problems = try #require(try run.json()["problems"] as? [String], "page \(page): \(run.output)")
            #expect(
                problems.contains { $0.hasPrefix("page structure:") && $0.contains("page \(page)") },
                "page \(page): \(problems)")
            #expect(problems.last?.hasPrefix("the other checks were not run") == true, "\(problems)")
        }
        // The undamaged store passes the audit (and every other check).
        let sound = try await StrataCommandRun.run(["verify", try StrataCommandRun.argument(for: store)])
        #expect(sound.status == 0, "\(sound.output) \(sound.error)")
    }

    @Test("copy and backup refuse a store with a damaged page, naming it, and write nothing")
    func copyAndBackupRefuse() async throws {
        let store = try await Self.store()
        let path = store.directory.appendingPathComponent("store.lmdb/data.mdb").path
        let pages = try #require(try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) / 4096
        let page = try Self.treePage(from: pages / 2, in: path)
        try Self.damage(store, page: page, .zeroed)
        let source = try StrataCommandRun.argument(for: store)
        let target = try TestStore(.sqlite)
        let destination = store.directory.appendingPathComponent("backup.lmdb").path
        for (arguments, written) in [
            (
                ["copy", source, try StrataCommandRun.argument(for: target)],
                target.directory.appendingPathComponent("store.sqlite").path
            ),
            (["backup", source, destination], destination),
        ] {
            let run = try await StrataCommandRun.run(arguments)
            #expect(run.status == 9, "\(arguments[0]): exit \(run.status): \(run.error)")
            #expect(run.error.contains("damaged pages") && run.error.contains("page \(page)"), "\(run.error)")
            #expect(!FileManager.default.fileExists(atPath: written), "\(arguments[0]) wrote \(written)")
        }
    }
}
