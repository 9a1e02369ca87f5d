import Foundation
import Strata
import StrataStorage
import Testing

/// Named history cursors and trimming against them (issue 15 §1): cursors live in the store, so
/// every engine on it sees them, and `deleteHistory(before:force:)` never deletes a transaction
/// the slowest cursor has not processed unless forced.
@Suite("history cursors and trimming")
struct HistoryCursorTests {
    /// Commits one insert with history per name; returns the tokens, oldest first.
    @discardableResult
    static func commit(_ engine: any HistoryStore, names: [String], padding: String = "") throws -> [Int64] {
        let start = try engine.currentHistoryToken()
        for name in names {
            let key = try engine.allocateKeys(entity: 0, count: 1).lowerBound
            var changes = HistoryStoreTests.inserting([HistoryStoreTests.account(key, name)], author: name)
            if !padding.isEmpty { changes.history?.author = name + padding }
            try engine.commit(changes)
        }
        return try engine.history(after: start, limit: nil).map(\.token)
    }

    /// The tokens of every history transaction left.
    static func tokens(_ engine: any HistoryStore) throws -> [Int64] {
        try engine.history(after: 0, limit: nil).map(\.token)
    }

    @Test(
        "cursors are set, moved and removed, survive reopening, and are shared by engines on one store",
        arguments: EngineKind.allCases)
    func cursorsRoundTrip(kind: EngineKind) throws {
        let store = try TestStore(kind)
        // 128 two-byte characters: the longest name, 256 UTF-8 bytes.
        let longest = String(repeating: "é", count: 128)
        do {
            let engine = try HistoryStoreTests.open(store)
            defer { engine.close() }
            #expect(try engine.historyCursors() == [:])
            try engine.setHistoryCursor("indexer", to: 3)
            try engine.setHistoryCursor("cache", to: 0)
            try engine.setHistoryCursor(longest, to: 7)
            #expect(try engine.historyCursors() == ["indexer": 3, "cache": 0, longest: 7])
            try engine.setHistoryCursor("indexer", to: 5)
            try engine.setHistoryCursor("cache", to: nil)
            try engine.setHistoryCursor("never registered", to: nil)
            #expect(try engine.historyCursors() == ["indexer": 5, longest: 7])
        }
        let first = try HistoryStoreTests.open(store)
        defer { first.close() }
        let second = try HistoryStoreTests.open(store)
        defer { second.close() }
        #expect(try first.historyCursors() == ["indexer": 5, longest: 7])
        try second.setHistoryCursor("sync", to: 2)
        try first.setHistoryCursor(longest, to: nil)
        #expect(try first.historyCursors() == ["indexer": 5, "sync": 2])
        #expect(try second.historyCursors() == ["indexer": 5, "sync": 2])
    }

    @Test(
        "an empty or too long cursor name, or a negative token, is misuse and stores nothing",
        arguments: EngineKind.allCases)
    func badCursorsAreMisuse(kind: EngineKind) throws {
        let store = try TestStore(kind)
        let engine = try HistoryStoreTests.open(store)
        defer { engine.close() }
        let tooLong = String(repeating: "a", count: 255) + "é" // 257 UTF-8 bytes
        for (name, token) in [("", Int64(1)), (tooLong, 1), ("", nil), ("reader", -1)] as [(String, Int64?)] {
            guard case .misuse(let message, _) = strataError({ try engine.setHistoryCursor(name, to: token) }) else {
                Issue.record(
                    "setHistoryCursor(\(name.utf8.count) bytes, to: \(String(describing: token))) was not misuse")
                continue
            }
            #expect(message.contains(token == -1 ? "token -1" : "1 to 256 UTF-8 bytes"), "\(message)")
        }
        #expect(try engine.historyCursors() == [:])
    }

    @Test(
        "trimming deletes before the token, stops after the slowest cursor unless forced, and returns its bound",
        arguments: EngineKind.allCases)
    func trimmingStopsAtTheSlowestCursor(kind: EngineKind) throws {
        let store = try TestStore(kind)
        let engine = try HistoryStoreTests.open(store)
        defer { engine.close() }
        let other = try HistoryStoreTests.open(store)
        defer { other.close() }
        let t = try Self.commit(engine, names: ["a", "b", "c", "d", "e", "f"])
        try #require(t.count == 6)

        // No cursor: the token is the bound.
        #expect(try engine.deleteHistory(before: t[1], force: false) == t[1])
        #expect(try Self.tokens(engine) == Array(t[1...]))
        // A cursor that has processed nothing yet holds everything.
        try engine.setHistoryCursor("new", to: 0)
        #expect(try engine.deleteHistory(before: .max, force: false) == 1)
        #expect(try Self.tokens(engine) == Array(t[1...]))
        try engine.setHistoryCursor("new", to: nil)

        // The slowest cursor has processed t[2]: everything up to it goes, nothing after it.
        try engine.setHistoryCursor("slow", to: t[2])
        try engine.setHistoryCursor("fast", to: t[5])
        #expect(try engine.deleteHistory(before: .max, force: false) == t[2] + 1)
        #expect(try Self.tokens(engine) == Array(t[3...]))

        // A cursor registered by another engine on the store counts the same.
        try engine.setHistoryCursor("slow", to: t[5])
        try other.setHistoryCursor("elsewhere", to: t[3])
        #expect(try engine.deleteHistory(before: .max, force: false) == t[3] + 1)
        #expect(try Self.tokens(engine) == Array(t[4...]))
        // A token below the slowest cursor's is the bound.
        #expect(try engine.deleteHistory(before: t[4], force: false) == t[4])
        #expect(try Self.tokens(engine) == Array(t[4...]))

        // Forced: the cursors do not count, and stay as they were.
        // The bound is never past the next commit's token.
        #expect(try other.deleteHistory(before: .max, force: true) == t[5] + 1)
        #expect(try Self.tokens(engine) == [])
        #expect(try engine.historyCursors() == ["slow": t[5], "fast": t[5], "elsewhere": t[3]])
        #expect(try engine.currentHistoryToken() == t[5])
    }

    /// About 1 KB per transaction: 300 of them fill many pages, so a trim walks across pages
    /// (LMDB deletes with one cursor from the first entry).
    @Test("trimming a long history deletes exactly the transactions before the bound", arguments: EngineKind.allCases)
    func trimmingALongHistory(kind: EngineKind) throws {
        let store = try TestStore(kind)
        let engine = try HistoryStoreTests.open(store)
        defer { engine.close() }
        let t = try Self.commit(engine, names: (1...300).map { "n\($0)" }, padding: String(repeating: "x", count: 1000))
        try #require(t.count == 300)
        #expect(try engine.deleteHistory(before: t[37], force: false) == t[37])
        #expect(try Self.tokens(engine) == Array(t[37...]))
        try engine.setHistoryCursor("reader", to: t[250])
        #expect(try engine.deleteHistory(before: .max, force: false) == t[250] + 1)
        #expect(try Self.tokens(engine) == Array(t[251...]))
        #expect(try engine.history(after: 0, limit: 1).first?.author == "n252" + String(repeating: "x", count: 1000))
        #expect(try engine.deleteHistory(before: t[299] + 1, force: true) == t[299] + 1)
        #expect(try Self.tokens(engine) == [])
    }
}
