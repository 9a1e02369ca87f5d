import Foundation
import Strata
import StrataLMDB
import StrataSQLite
import StrataStorage
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A store path that names something other than a regular file or a directory (a device such as
/// `/dev/null`, a FIFO, a link to either) is refused with `.notAStore` saying what is there, and
/// nothing is created: a device reads as empty or endless, and a FIFO blocks its reader forever.
@Suite("a store path that is not a regular file")
struct NotARegularFileTests {
    /// The configuration of a `kind` store at exactly `url`.
    static func configuration(_ kind: EngineKind, at url: URL) -> EngineConfiguration {
        kind == .lmdb ? .lmdb(at: url) : .sqlite(at: url)
    }

    /// The inspection (the tool's read-only way in) of a `kind` store at `url`.
    static func inspection(_ kind: EngineKind, at url: URL) -> StoreInspection {
        kind == .lmdb ? EngineConfiguration.lmdbInspection(at: url) : EngineConfiguration.sqliteInspection(at: url)
    }

    @Test(
        "/dev/null, a link to it and a FIFO as the store path give .notAStore naming what is there",
        // Not PostgreSQL or memory: their stores are not named by a path.
        arguments: EngineKind.fileEngines)
    func refused(kind: EngineKind) throws {
        let store = try TestStore(kind)
        let link = store.directory.appendingPathComponent("link-to-null")
        try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: "/dev/null")
        let fifo = store.directory.appendingPathComponent("fifo")
        try #require(mkfifo(fifo.path, 0o644) == 0)
        let cases: [(URL, String)] = [
            (URL(fileURLWithPath: "/dev/null"), "a character device"), (link, "a character device"),
            (fifo, "a FIFO"),
        ]
        for (url, what) in cases {
            let opened = strataError {
                _ = try PersistentContainer(schema: TestModels.schema, engine: Self.configuration(kind, at: url))
            }
            let inspected = strataError { _ = try Self.inspection(kind, at: url).readRecord() }
            for error in [opened, inspected] {
                guard case .notAStore(let path, let reason, _)? = error else {
                    Issue.record("\(url.path): expected .notAStore, got \(String(describing: error))")
                    continue
                }
                #expect(path == url.path)
                #expect(reason.contains(what) && !reason.contains("empty"), "\(reason)")
                if kind == .sqlite { #expect(reason.contains("not a regular file"), "\(reason)") }
            }
        }
        let left = try FileManager.default.contentsOfDirectory(atPath: store.directory.path).sorted()
        #expect(left == ["fifo", "link-to-null"], "created \(left)")
        #expect(SystemCalls.fileKind(atPath: "/dev/null") == .characterDevice)
    }

    @Test("strata inspect and backup of /dev/null exit 6 (not a Strata store) saying it is a device")
    func tool() async throws {
        for kind in EngineKind.fileEngines {
            let argument = (kind == .lmdb ? "lmdb:" : "sqlite:") + "/dev/null"
            let inspect = try await StrataCommandRun.run(["inspect", argument])
            ToolBadInputTests.expectRefused(inspect, status: 6, mentioning: "character device")
            let store = try TestStore(kind)
            let backup = try await StrataCommandRun.run([
                "backup", argument, store.directory.appendingPathComponent("backup").path,
            ])
            ToolBadInputTests.expectRefused(backup, status: 6, mentioning: "character device")
            #expect(try FileManager.default.contentsOfDirectory(atPath: store.directory.path).isEmpty)
        }
    }
}
