import Dispatch
import Foundation
import Strata
import StrataSQLite
import StrataStorage
import StrataTestSupport
import Synchronization
import Testing

/// Creating a new store while other openers race for it: exactly one creates, the others open
/// the store it made, and a creator that died half-way leaves nothing that breaks later opens.
@Suite("SQLiteEngine store creation")
struct SQLiteEngineCreationTests {
    /// Names in the store's directory that belong to a store creation in progress.
    private static func creationFiles(_ store: TemporarySQLiteStore) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: store.directory.path(percentEncoded: false))
            .filter { $0.contains(".strata-new-") }
    }

    /// The process ID of a process that has exited.
    private static func deadProcessID() throws -> Int32 {
        let process = SpawnedProcess()
        process.executableURL = URL(fileURLWithPath: "/bin/true")
        try process.run()
        process.waitUntilExit()
        return process.processIdentifier
    }

    @Test("8 threads opening a new store at once all open the same store")
    func concurrentFirstOpens() throws {
        let openers = 8
        for round in 0..<20 {
            let store = try TemporarySQLiteStore()
            let url = store.url
            let outcomes = Mutex<[Result<UUID, StrataError>]>([])
            DispatchQueue.concurrentPerform(iterations: openers) { _ in
                let outcome: Result<UUID, StrataError>
                do {
                    let engine = try EngineConfiguration.sqlite(at: url).open(Fixtures.schema)
                    outcome = .success(engine.storeIdentifier)
                    engine.close()
                } catch let error as StrataError {
                    outcome = .failure(error)
                } catch {
                    outcome = .failure(.io("\(error)"))
                }
                outcomes.withLock { $0.append(outcome) }
            }
            let results = outcomes.withLock { $0 }
            let failures = results.compactMap { if case .failure(let error) = $0 { error } else { nil } }
            #expect(
                failures.isEmpty,
                "round \(round): \(failures.count) of \(openers) opens failed: \(failures.map(\.description))")
            let identifiers = Set(results.compactMap { try? $0.get() })
            #expect(identifiers.count == 1, "round \(round): the openers saw \(identifiers.count) different stores")
            #expect(try Self.creationFiles(store).isEmpty, "round \(round): creation files were left behind")
            if !failures.isEmpty { return }
        }
    }

    @Test func aCreatorThatDiedLeavesNothingThatBreaksLaterOpens() throws {
        let store = try TemporarySQLiteStore()
        let dead = try Self.deadProcessID()
        let directory = store.directory
        // A creator that died while building its store...
        let halfBuilt = directory.appending(path: ".store.sqlite.strata-new-\(dead)-A")
        try Data(repeating: 0x5A, count: 100).write(to: halfBuilt)
        try Data().write(to: directory.appending(path: ".store.sqlite.strata-new-\(dead)-B"))
        // ...and one that died between linking its store into place and removing its own name.
        let first = try store.open()
        let identifier = first.storeIdentifier
        try first.commit(Fixtures.inserts([Fixtures.account(1, "Kept")]))
        first.close()
        let linked = directory.appending(path: ".store.sqlite.strata-new-\(dead)-C")
        try FileManager.default.linkItem(at: store.url, to: linked)

        let engine = try store.open()
        defer { engine.close() }
        #expect(engine.storeIdentifier == identifier)
        #expect(try allRows(engine, Fixtures.account).map(\.values.first) == [.text("Kept")])
    }

    @Test func creationCleansUpDeadCreatorsFiles() throws {
        let store = try TemporarySQLiteStore()
        let dead = try Self.deadProcessID()
        let leftover = store.directory.appending(path: ".store.sqlite.strata-new-\(dead)-X")
        try Data(repeating: 0x5A, count: 100).write(to: leftover)
        let engine = try store.open()
        engine.close()
        #expect(try Self.creationFiles(store).isEmpty)
        // The new store is complete and reopens.
        #expect(try store.open().storeIdentifier == engine.storeIdentifier)
    }

    @Test func aStoreIsCreatedThroughASymbolicLinkToAMissingFile() throws {
        let store = try TemporarySQLiteStore()
        let link = store.directory.appending(path: "link.sqlite")
        try FileManager.default.createSymbolicLink(
            atPath: link.path(percentEncoded: false), withDestinationPath: "store.sqlite")
        let engine = try EngineConfiguration.sqlite(at: link).open(Fixtures.schema)
        let identifier = engine.storeIdentifier
        engine.close()
        #expect(try store.open().storeIdentifier == identifier)
        #expect(try Self.creationFiles(store).isEmpty)
    }

    @Test func aLoopOfSymbolicLinksIsAnIOError() throws {
        let store = try TemporarySQLiteStore()
        let directory = store.directory.path(percentEncoded: false)
        try FileManager.default.createSymbolicLink(atPath: directory + "/a.sqlite", withDestinationPath: "b.sqlite")
        try FileManager.default.createSymbolicLink(atPath: directory + "/b.sqlite", withDestinationPath: "a.sqlite")
        let error = strataError {
            _ = try EngineConfiguration.sqlite(at: store.directory.appending(path: "a.sqlite")).open(Fixtures.schema)
        }
        guard case .io = error else {
            Issue.record("a symbolic link loop gave \(String(describing: error))")
            return
        }
    }

    @Test func aNewStoreIsCompleteTheMomentItsNameAppears() throws {
        let store = try TemporarySQLiteStore()
        try store.open().close()
        // Opened by the plain sqlite3 library, the file already holds Strata's tables.
        let raw = try RawSQLite(path: store.path)
        #expect(try raw.strings("SELECT value FROM strata_metadata WHERE key = 'format_version'") == ["1"])
        #expect(try raw.strings("PRAGMA journal_mode") == ["wal"])
    }
}
