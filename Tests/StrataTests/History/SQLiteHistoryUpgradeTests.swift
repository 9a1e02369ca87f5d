import Foundation
import Strata
import StrataStorage
import Testing

/// A SQLite store made before persistent history (no `strata_history` table, no
/// `history_token` counter, no `strata_history_cursors` table) still opens, and gains them at
/// that open.
@Suite("SQLite history on older stores")
struct SQLiteHistoryUpgradeTests {
    @Test func aStoreWithoutHistoryOpensAndGainsIt() throws {
        let store = try TestStore(.sqlite)
        let path = store.directory.appendingPathComponent("store.sqlite").path
        do {
            let engine = try HistoryStoreTests.open(store)
            defer { engine.close() }
            var plain = ChangeSet()
            plain.inserts = [HistoryStoreTests.account(1, "old")]
            try engine.commit(plain)
        }
        // Today's stores as the previous release made them.
        do {
            let raw = try RawSQLite(path: path)
            try raw.execute("DROP TABLE strata_history")
            try raw.execute("DROP TABLE strata_history_cursors")
            try raw.execute("DELETE FROM strata_metadata WHERE key = 'history_token'")
        }

        let engine = try HistoryStoreTests.open(store)
        defer { engine.close() }
        #expect(try engine.currentHistoryToken() == 0)
        #expect(try engine.history(after: 0, limit: nil) == [])
        try engine.commit(HistoryStoreTests.inserting([HistoryStoreTests.account(2, "new")], author: "upgraded"))
        let history = try engine.history(after: 0, limit: nil)
        #expect(history.map(\.author) == ["upgraded"])
        #expect(history.first?.token == 1)
        #expect(try allRows(engine, 0).map(\.key) == [1, 2])
        #expect(try engine.historyCursors() == [:])
        try engine.setHistoryCursor("reader", to: 1)
        #expect(try engine.deleteHistory(before: .max, force: false) == 2)

        let raw = try RawSQLite(path: path)
        #expect(try raw.strings("SELECT count(*) FROM strata_history") == ["0"])
        #expect(try raw.strings("SELECT name || '=' || token FROM strata_history_cursors") == ["reader=1"])
        #expect(try raw.strings("SELECT value FROM strata_metadata WHERE key = 'history_token'") == ["1"])
    }

    @Test func aCounterBehindTheTableIsStoreCorruptAndWritesNothing() throws {
        let store = try TestStore(.sqlite)
        let path = store.directory.appendingPathComponent("store.sqlite").path
        let engine = try HistoryStoreTests.open(store)
        defer { engine.close() }
        try engine.commit(HistoryStoreTests.inserting([HistoryStoreTests.account(1, "a")], author: nil))
        try RawSQLite(path: path).execute("UPDATE strata_metadata SET value = 0 WHERE key = 'history_token'")

        let error = strataError {
            try engine.commit(HistoryStoreTests.inserting([HistoryStoreTests.account(2, "b")], author: nil))
        }
        guard case .storeCorrupt(let detail, _) = error else {
            Issue.record("expected storeCorrupt, got \(String(describing: error))")
            return
        }
        #expect(detail.contains("strata_history already has token 1"))
        #expect(try allRows(engine, 0).map(\.key) == [1])
    }
}
