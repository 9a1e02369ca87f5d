import Foundation
import Strata
import Testing

/// A store whose file is deleted, or replaced by another store's, while a container has it open:
/// the container's next save is refused with `.notAStore` and writes nothing, instead of being
/// acknowledged into a file no path names any more (lost, while new processes open another
/// store). And a SQLite store file deleted beside its write-ahead log is not made again over
/// that log, which SQLite would replay onto the new file and damage it.
///
/// Found by an outside probe: on both embedded engines the saves went on "successfully", and a
/// new process then found an empty store (or the other store) at the path. PostgreSQL checks the
/// store's identity in every commit already (`PostgresReplacedStoreTests`); the in-memory
/// engine has no files.
@Suite("a store file deleted or replaced under an open container")
struct MovedStoreFileTests {
    /// The file the engine writes into (SQLite's database file, LMDB's `data.mdb`).
    static func dataFile(of store: TestStore) -> URL {
        let location = store.configuration.location
        return store.kind == .lmdb ? location.appendingPathComponent("data.mdb") : location
    }

    static func saveAccount(_ name: String, in container: PersistentContainer) async throws {
        _ = try await Account.insert(named: name, into: container)
    }

    /// The reason of a `.notAStore` error; nil (and an issue recorded) for anything else.
    static func notAStoreReason(_ error: StrataError?) -> String? {
        if case .notAStore(_, let reason, _)? = error { return reason }
        Issue.record("expected .notAStore, got \(String(describing: error))")
        return nil
    }

    @Test(
        "a save after the store's file was deleted throws .notAStore and writes nothing",
        arguments: EngineKind.fileEngines)
    func deletedFile(kind: EngineKind) async throws {
        let store = try TestStore(kind)
        let container = try store.open()
        try await Self.saveAccount("before", in: container)
        try FileManager.default.removeItem(at: Self.dataFile(of: store))

        let error = await #expect(throws: StrataError.self) { try await Self.saveAccount("after", in: container) }
        let reason = Self.notAStoreReason(error)
        #expect(reason?.contains("deleted or replaced") == true && reason?.contains("Nothing was written") == true)
        container.close()
    }

    @Test(
        "a save after another store's file was moved over this one's throws .notAStore; the other store is untouched",
        arguments: EngineKind.fileEngines)
    func replacedFile(kind: EngineKind) async throws {
        let store = try TestStore(kind)
        let container = try store.open()
        try await Self.saveAccount("mine", in: container)
        let other = try TestStore(kind)
        let otherContainer = try other.open()
        try await Self.saveAccount("theirs", in: otherContainer)
        otherContainer.close()

        #expect(rename(Self.dataFile(of: other).path, Self.dataFile(of: store).path) == 0)
        let error = await #expect(throws: StrataError.self) { try await Self.saveAccount("lost", in: container) }
        #expect(Self.notAStoreReason(error)?.contains("no longer the store this container opened") == true)
        container.close()

        // LMDB: the path now holds the other store, with its one account and nothing of this
        // one's. (SQLite: this store's write-ahead log is still beside the path, and SQLite would
        // replay it onto the other file at the next open; Docs/Reliability.md says to replace a
        // store file only with every process stopped and its -wal and -shm files removed.)
        guard kind == .lmdb else { return }
        let reopened = try store.open()
        let context = reopened.newBackgroundContext()
        let names = try await context.perform { try context.fetch(FetchRequest<Account>()).map(\.name) }
        #expect(names == ["theirs"])
        reopened.close()
    }

    @Test("SQLite: a store file deleted beside its write-ahead log is not made again over that log")
    func leftoverLog() async throws {
        let store = try TestStore(.sqlite)
        let container = try store.open()
        try await Self.saveAccount("kept in the log", in: container)
        let file = Self.dataFile(of: store)
        let log = URL(fileURLWithPath: file.path + "-wal")
        let logSize = try FileManager.default.attributesOfItem(atPath: log.path)[.size] as? Int
        try #require((logSize ?? 0) > 0, "the open container's commit is in the log")
        try FileManager.default.removeItem(at: file)

        let error = #expect(throws: StrataError.self) { try store.open() }
        let reason = Self.notAStoreReason(error)
        #expect(reason?.contains("write-ahead log") == true && reason?.contains(log.path) == true)
        #expect(!FileManager.default.fileExists(atPath: file.path), "no new store file was made")
        container.close()
    }
}
