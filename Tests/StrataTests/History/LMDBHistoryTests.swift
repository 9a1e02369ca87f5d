import Foundation
import Strata
import StrataLMDB
import StrataStorage
import Testing

/// One entity for the history tests: a unique name and a count.
final class HistoryNote: ManagedObject {
    @Attribute(.unique) var name = ""
    @Attribute var count: Int64 = 0
}

/// The engine side of persistent history (issue 15, groundwork): `HistoryStore` on real store
/// files, through the engine. (On the LMDB branch the SQLite cases fail until the SQLite
/// engine conforms.)
@Suite("Engine history")
struct LMDBHistoryTests {
    static let schema: Schema = {
        do {
            return try Schema(version: 1, [HistoryNote.self])
        } catch {
            fatalError("history schema: \(error)")
        }
    }()

    /// The store's engine as a `HistoryStore` (fails the test when it is not one).
    private func open(_ store: TestStore, _ configuration: EngineConfiguration? = nil) throws -> any HistoryStore {
        let engine = try (configuration ?? store.configuration).open(Self.schema.storeSchema)
        guard let history = engine as? any HistoryStore else {
            engine.close()
            throw StrataError.misuse("the \(store.kind) engine keeps no history")
        }
        return history
    }

    /// A row's values, by the schema's column order.
    private func values(name: String, count: Int64) -> ContiguousArray<StoredValue> {
        ContiguousArray(
            Self.schema.storeSchema.entities[0].columns.map { $0.name == "name" ? .text(name) : .integer(count) })
    }

    /// Inserts a note with `history` attached; returns its key.
    @discardableResult
    private func insert(
        _ engine: any HistoryStore, _ name: String, author: String? = "tests", history: Bool = true
    ) throws -> Int64 {
        let key = try engine.allocateKeys(entity: 0, count: 1).lowerBound
        var changes = ChangeSet()
        changes.inserts = [RowWrite(entity: 0, key: key, expectedVersion: 0, values: values(name: name, count: 0))]
        if history {
            changes.history = HistoryRecord(
                author: author,
                changes: [HistoryChange(entity: "HistoryNote", key: key, kind: .insert, changedProperties: ["name"])])
        }
        try engine.commit(changes)
        return key
    }

    @Test(arguments: EngineKind.allCases)
    func appendsAndReadsBack(kind: EngineKind) throws {
        let store = try TestStore(kind)
        let engine = try open(store)
        defer { engine.close() }
        #expect(try engine.currentHistoryToken() == 0)
        let key = try insert(engine, "first", author: "importer")
        var update = ChangeSet()
        update.updates = [RowWrite(entity: 0, key: key, expectedVersion: 1, values: values(name: "first", count: 2))]
        let updated = HistoryChange(entity: "HistoryNote", key: key, kind: .update, changedProperties: ["count"])
        update.history = HistoryRecord(author: nil, changes: [updated])
        try engine.commit(update)
        var delete = ChangeSet()
        delete.deletes = [RowVersionCheck(entity: 0, key: key, expectedVersion: 2)]
        let deleted = HistoryChange(
            entity: "HistoryNote", key: key, kind: .delete, changedProperties: [],
            tombstone: ["name": RecordedValue(.text("first")), "count": RecordedValue(.integer(2))])
        delete.history = HistoryRecord(author: "cleaner", changes: [deleted])
        try engine.commit(delete)

        let all = try engine.history(after: 0, limit: nil)
        #expect(all.count == 3)
        #expect(all.map(\.token) == all.map(\.token).sorted())
        #expect(Set(all.map(\.token)).count == 3)
        #expect(all.first.map(\.token).map { $0 > 0 } == true)
        #expect(all.map(\.author) == ["importer", nil, "cleaner"])
        #expect(
            all[0].changes == [
                HistoryChange(entity: "HistoryNote", key: key, kind: .insert, changedProperties: ["name"])
            ])
        #expect(all[1].changes == [updated])
        #expect(all[2].changes == [deleted])
        #expect(try engine.currentHistoryToken() == all[2].token)
        #expect(try engine.history(after: all[0].token, limit: nil) == Array(all[1...]))
    }

    @Test(arguments: EngineKind.allCases)
    func aChangeSetWithoutHistoryAppendsNothing(kind: EngineKind) throws {
        let store = try TestStore(kind)
        let engine = try open(store)
        defer { engine.close() }
        try insert(engine, "quiet", history: false)
        #expect(try engine.currentHistoryToken() == 0)
        #expect(try engine.history(after: 0, limit: nil).isEmpty)
        try insert(engine, "loud")
        #expect(try engine.history(after: 0, limit: nil).map(\.changes.count) == [1])
    }

    @Test(arguments: EngineKind.allCases)
    func aFailedCommitAppendsNothing(kind: EngineKind) throws {
        let store = try TestStore(kind)
        let engine = try open(store)
        defer { engine.close() }
        let key = try insert(engine, "taken")
        let before = try engine.history(after: 0, limit: nil)
        let record = HistoryRecord(
            author: "loser",
            changes: [HistoryChange(entity: "HistoryNote", key: key, kind: .update, changedProperties: [])])

        var stale = ChangeSet()
        stale.updates = [RowWrite(entity: 0, key: key, expectedVersion: 7, values: values(name: "taken", count: 1))]
        stale.history = record
        #expect {
            try engine.commit(stale)
        } throws: { error in
            if case .conflict? = error as? StrataError { true } else { false }
        }

        var clash = ChangeSet()
        let other = try engine.allocateKeys(entity: 0, count: 1).lowerBound
        clash.inserts = [RowWrite(entity: 0, key: other, expectedVersion: 0, values: values(name: "taken", count: 0))]
        clash.history = record
        #expect {
            try engine.commit(clash)
        } throws: { error in
            if case .constraintViolation? = error as? StrataError { true } else { false }
        }

        #expect(try engine.history(after: 0, limit: nil) == before)
        #expect(try engine.currentHistoryToken() == before.last?.token)
    }

    @Test(arguments: EngineKind.allCases)
    func tokensKeepIncreasingAcrossReopenAndDeletion(kind: EngineKind) throws {
        let store = try TestStore(kind)
        var engine = try open(store)
        for name in ["a", "b", "c"] { try insert(engine, name) }
        let three = try engine.history(after: 0, limit: nil).map(\.token)
        try engine.deleteHistory(before: three[1])
        #expect(try engine.history(after: 0, limit: nil).map(\.token) == Array(three[1...]))
        try engine.deleteHistory(before: three[2] + 1)
        #expect(try engine.history(after: 0, limit: nil).isEmpty)
        #expect(try engine.currentHistoryToken() == three[2])
        try insert(engine, "d")
        let fourth = try #require(try engine.history(after: 0, limit: nil).first).token
        #expect(fourth > three[2])
        engine.close()

        engine = try open(store)
        defer { engine.close() }
        #expect(try engine.currentHistoryToken() == fourth)
        try engine.deleteHistory(before: fourth + 1)
        try insert(engine, "e")
        let fifth = try #require(try engine.history(after: 0, limit: nil).first).token
        #expect(fifth > fourth)
    }

    @Test(arguments: EngineKind.allCases)
    func readsInTokenOrderUpToTheLimit(kind: EngineKind) throws {
        let store = try TestStore(kind)
        let engine = try open(store)
        defer { engine.close() }
        for number in 1...12 { try insert(engine, "note \(number)", author: "author \(number)") }
        let all = try engine.history(after: 0, limit: nil)
        #expect(all.map(\.author) == (1...12).map { "author \($0)" })
        #expect(all.map(\.token) == all.map(\.token).sorted())
        #expect(try engine.history(after: 0, limit: 2) == Array(all.prefix(2)))
        #expect(try engine.history(after: all[9].token, limit: 5) == Array(all[10...]))
        #expect(try engine.history(after: all[3].token, limit: 3) == Array(all[4..<7]))
        #expect(try engine.history(after: all[11].token, limit: nil).isEmpty)
        #expect(try engine.history(after: 0, limit: 0).isEmpty)
    }

    /// Each entry is about 8 KB, so 300 of them outgrow a 256 KB map several times over (and go
    /// past token 255, so keys that do not sort as numbers would show).
    @Test func lmdbHistorySurvivesMapGrowth() throws {
        let store = try TestStore(.lmdb)
        let options = LMDBOptions(initialMapSize: 256 << 10, maximumMapSize: 256 << 20)
        let configuration = EngineConfiguration.lmdb(
            at: store.directory.appendingPathComponent("store.lmdb"), options: options)
        var engine = try open(store, configuration)
        let padding = String(repeating: "x", count: 8 << 10)
        for number in 1...300 {
            let key = try engine.allocateKeys(entity: 0, count: 1).lowerBound
            var changes = ChangeSet()
            changes.inserts = [
                RowWrite(entity: 0, key: key, expectedVersion: 0, values: values(name: "\(number)", count: 0))
            ]
            changes.history = HistoryRecord(
                author: "\(number)",
                changes: [HistoryChange(entity: "HistoryNote", key: key, kind: .insert, changedProperties: [padding])])
            try engine.commit(changes)
        }
        engine.close()
        let file = store.directory.appendingPathComponent("store.lmdb/data.mdb")
        let size = try #require(try FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int)
        #expect(size > 4 * (256 << 10))
        engine = try open(store, configuration)
        defer { engine.close() }
        let all = try engine.history(after: 0, limit: nil)
        #expect(all.map(\.author) == (1...300).map { "\($0)" })
        #expect(all.allSatisfy { $0.changes.first?.changedProperties == [padding] })
    }

    /// A store made before persistent history (no `strata.history`, no token) opens, gets the
    /// database, and starts at token 1.
    @Test func lmdbStoreWithoutHistoryGetsItAtOpen() throws {
        let store = try TestStore(.lmdb)
        var engine = try open(store)
        try insert(engine, "old", history: false)
        engine.close()
        try RawStoreEdits.removeLMDBHistory(store)
        #expect(try !RawStoreEdits.lmdbDatabaseNames(store).contains("strata.history"))
        engine = try open(store)
        defer { engine.close() }
        #expect(try engine.currentHistoryToken() == 0)
        try insert(engine, "new")
        #expect(try engine.history(after: 0, limit: nil).map(\.token) == [1])
    }

    /// A history entry whose bytes changed on disk is reported as damage, not decoded.
    @Test func lmdbDamagedHistoryIsStoreCorrupt() throws {
        let store = try TestStore(.lmdb)
        var engine = try open(store)
        try insert(engine, "one")
        try insert(engine, "two")
        let tokens = try engine.history(after: 0, limit: nil).map(\.token)
        engine.close()
        try RawStoreEdits.damageLMDBHistory(store, token: tokens[1])
        engine = try open(store)
        defer { engine.close() }
        #expect(try engine.history(after: 0, limit: 1).map(\.token) == [tokens[0]])
        #expect {
            try engine.history(after: 0, limit: nil)
        } throws: { error in
            if case .storeCorrupt? = error as? StrataError { true } else { false }
        }
    }
}
