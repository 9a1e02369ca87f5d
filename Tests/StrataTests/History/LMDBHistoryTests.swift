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

/// What only LMDB's persistent history has (issue 15): map growth, a store made before history,
/// damaged entries. The cases every engine shares are in ``HistoryStoreTests`` and
/// ``HistoryCursorTests``.
@Suite("LMDB history")
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
