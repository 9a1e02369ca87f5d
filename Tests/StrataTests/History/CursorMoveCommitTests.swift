import Foundation
import Strata
import StrataStorage
import Testing

/// The engine side of cursor moves in a commit (`ChangeSet.cursorMoves`), on every engine: a
/// stale cursor and a stale row are reported together and nothing is written; a bad move is
/// refused with `.misuse` and writes nothing; moves alone append no history.
@Suite("cursor moves in a commit")
struct CursorMoveCommitTests {
    @Test(
        "a stale cursor and a stale row are one .conflict listing both; nothing is written",
        arguments: EngineKind.allCases)
    func conflictsTogether(kind: EngineKind) throws {
        let store = try TestStore(kind)
        let engine = try HistoryStoreTests.open(store)
        defer { engine.close() }
        let key = try engine.allocateKeys(entity: 0, count: 2).lowerBound
        try engine.commit(HistoryStoreTests.inserting([HistoryStoreTests.account(key, "A")], author: nil))
        try engine.setHistoryCursor("c", to: 1)
        let token = try engine.currentHistoryToken()

        var changes = HistoryStoreTests.inserting([HistoryStoreTests.account(key + 1, "B")], author: nil)
        changes.updates = [HistoryStoreTests.account(key, "A2", version: 7)] // stored version is 1
        changes.cursorMoves = [HistoryCursorMove(name: "c", expectedToken: 0, token: 2)]
        let error = #expect(throws: StrataError.self) { try engine.commit(changes) }
        guard case .conflict(let conflicts)? = error else {
            Issue.record("expected .conflict, got \(String(describing: error))")
            return
        }
        #expect(conflicts.count == 2)
        #expect(conflicts.contains { $0.historyCursor == nil && $0.objectID.primaryKey == key })
        let cursor = conflicts.first { $0.historyCursor == "c" }
        #expect(cursor?.expectedVersion == 0 && cursor?.storedVersion == 1)
        #expect(cursor?.description.contains("history cursor \"c\"") == true)
        #expect(try engine.historyCursors() == ["c": 1])
        #expect(try engine.currentHistoryToken() == token)
        let reader = try engine.makeReader()
        defer { reader.close() }
        #expect(try reader.row(entity: 0, key: key + 1) == nil)
    }

    @Test("a bad move is refused with .misuse and writes nothing", arguments: EngineKind.allCases)
    func badMoves(kind: EngineKind) throws {
        let store = try TestStore(kind)
        let engine = try HistoryStoreTests.open(store)
        defer { engine.close() }
        try engine.setHistoryCursor("c", to: 5)
        let key = try engine.allocateKeys(entity: 0, count: 1).lowerBound
        let bad: [[HistoryCursorMove]] = [
            [HistoryCursorMove(name: "c", expectedToken: 5, token: 4)], // backwards
            [HistoryCursorMove(name: "", expectedToken: nil, token: 1)], // no name
            [HistoryCursorMove(name: "c", expectedToken: 5, token: -1)], // negative
            [
                HistoryCursorMove(name: "c", expectedToken: 5, token: 6),
                HistoryCursorMove(name: "c", expectedToken: 6, token: 7),
            ], // twice
        ]
        for moves in bad {
            var changes = HistoryStoreTests.inserting([HistoryStoreTests.account(key, "A")], author: nil)
            changes.cursorMoves = moves
            let error = #expect(throws: StrataError.self) { try engine.commit(changes) }
            guard case .misuse? = error else {
                Issue.record("\(moves): expected .misuse, got \(String(describing: error))")
                continue
            }
        }
        #expect(try engine.historyCursors() == ["c": 5])
        #expect(try engine.currentHistoryToken() == 0)
    }

    @Test("moves alone commit, append no history, and register a missing cursor once", arguments: EngineKind.allCases)
    func movesAlone(kind: EngineKind) throws {
        let store = try TestStore(kind)
        let engine = try HistoryStoreTests.open(store)
        defer { engine.close() }
        var changes = ChangeSet()
        changes.cursorMoves = [HistoryCursorMove(name: "new", expectedToken: nil, token: 0)]
        #expect(!changes.isEmpty && !changes.writesData)
        try engine.commit(changes)
        #expect(try engine.historyCursors() == ["new": 0])
        let error = #expect(throws: StrataError.self) { try engine.commit(changes) }
        guard case .conflict(let conflicts)? = error else {
            Issue.record("expected .conflict, got \(String(describing: error))")
            return
        }
        #expect(conflicts.map(\.historyCursor) == ["new"] && conflicts.first?.storedVersion == 0)
        changes.cursorMoves = [HistoryCursorMove(name: "new", expectedToken: 0, token: 3)]
        try engine.commit(changes)
        #expect(try engine.historyCursors() == ["new": 3])
        #expect(try engine.currentHistoryToken() == 0)
        #expect(try engine.history(after: 0, limit: nil).isEmpty)
    }
}
