import Foundation
import Strata
import StrataStorage
import StrataTestSupport
import Testing

@Suite("LMDB damaged and foreign files give typed errors")
struct LMDBBadFileTests {
    static func isTyped(_ error: StrataError?) -> Bool {
        switch error {
        case .notAStore?, .storeCorrupt?: true
        default: false
        }
    }

    /// A store with some rows, closed.
    static func closedStore(marker: String = "MARKER-7f3a-unique") throws -> URL {
        let directory = LMDBFixture.directory()
        let engine = try LMDBFixture.open(directory)
        var changes = ChangeSet()
        for key in Int64(1)...200 {
            changes.inserts.append(
                RowWrite(
                    entity: 0, key: key, expectedVersion: 0,
                    values: [
                        .text("account \(key)"), .integer(key),
                        .text(key == 77 ? marker : String(repeating: "m", count: 500)),
                    ]))
        }
        try engine.commit(changes)
        engine.close()
        return directory
    }

    @Test("a flipped byte inside a stored value reads as .storeCorrupt")
    func flippedValue() throws {
        let marker = "MARKER-7f3a-unique"
        let directory = try Self.closedStore(marker: marker)
        let file = directory.appendingPathComponent("data.mdb")
        var bytes = try Data(contentsOf: file)
        let range = try #require(bytes.range(of: Data(marker.utf8)))
        bytes[range.lowerBound + 3] ^= 0x20
        try bytes.write(to: file)
        let engine = try LMDBFixture.open(directory)
        defer { engine.close() }
        let reader = try engine.makeReader()
        defer { reader.close() }
        #expect(Self.isCorrupt(LMDBFixture.strataError { _ = try reader.row(entity: 0, key: 77) }))
        #expect(Self.isCorrupt(LMDBFixture.strataError { _ = try reader.rows(for: FetchPlan(entity: 0)) }))
        #expect(
            Self.isCorrupt(
                LMDBFixture.strataError {
                    _ = try reader.rows(
                        for: FetchPlan(entity: 0, filter: .compare(column: 0, .equal, .text("account 77"))))
                }))
        for groupBy in [[], [0], [2]] {
            let plan = AggregatePlan(entity: 0, groupBy: groupBy, functions: [.count, .sum(column: 1)])
            let error = LMDBFixture.strataError { _ = try reader.aggregate(plan) }
            guard case .storeCorrupt(let detail, _)? = error else {
                Issue.record("aggregate grouped by \(groupBy): expected storeCorrupt, got \(String(describing: error))")
                continue
            }
            #expect(detail.contains("row 77") && detail.contains("checksum mismatch"), "\(detail)")
        }
        #expect(try reader.row(entity: 0, key: 76) != nil)
    }

    static func isCorrupt(_ error: StrataError?) -> Bool {
        if case .storeCorrupt? = error { return true }
        return false
    }

    @Test("a truncated data.mdb is refused at open")
    func truncated() throws {
        let directory = try Self.closedStore()
        let file = directory.appendingPathComponent("data.mdb")
        let handle = try FileHandle(forWritingTo: file)
        let size = try handle.seekToEnd()
        #expect(size > 8 * 4096)
        try handle.truncate(atOffset: size / 2)
        try handle.close()
        let error = LMDBFixture.strataError { _ = try LMDBFixture.open(directory) }
        guard case .storeCorrupt(let detail, _)? = error else {
            Issue.record("expected .storeCorrupt, got \(String(describing: error))")
            return
        }
        #expect(detail.contains("truncated"))
    }

    @Test(
        "garbage, empty and SQLite data.mdb files and a SQLite file as the path are refused",
        arguments: ["garbage", "empty", "sqlite", "short"])
    func foreignFiles(kind: String) throws {
        let directory = LMDBFixture.directory()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let file = directory.appendingPathComponent("data.mdb")
        let sqliteHeader = Data("SQLite format 3\0".utf8) + Data(repeating: 1, count: 8192)
        switch kind {
        case "garbage": try Data((0..<65536).map { UInt8(truncatingIfNeeded: $0 &* 7919 &+ 13) }).write(to: file)
        case "empty": try Data().write(to: file)
        case "sqlite": try sqliteHeader.write(to: file)
        default: try Data(repeating: 0xDE, count: 100).write(to: file)
        }
        #expect(Self.isTyped(LMDBFixture.strataError { _ = try LMDBFixture.open(directory) }))
    }

    @Test("a regular file (a SQLite store) as the store path is not a store")
    func fileAsPath() throws {
        let directory = LMDBFixture.directory()
        try FileManager.default.createDirectory(
            at: directory.deletingLastPathComponent(), withIntermediateDirectories: true)
        try (Data("SQLite format 3\0".utf8) + Data(repeating: 0, count: 4096)).write(to: directory)
        let error = LMDBFixture.strataError { _ = try LMDBFixture.open(directory) }
        guard case .notAStore? = error else {
            Issue.record("expected .notAStore, got \(String(describing: error))")
            return
        }
    }

    @Test("mdb_stat from lmdb-utils reads the store (CI installs lmdb-utils)")
    func mdbStat() throws {
        let tool = "/usr/bin/mdb_stat"
        try #require(
            FileManager.default.isExecutableFile(atPath: tool), "\(tool) is missing: install lmdb-utils (CI does)")
        let directory = try Self.closedStore()
        let process = SpawnedProcess()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = ["-a", directory.path]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(output)")
        #expect(output.contains("e.Account"))
        #expect(output.contains("i.Account_name_unique"))
        #expect(output.contains("strata.meta"))
    }
}
