import Foundation
import Strata
import StrataStorage
import Testing

/// The engine side of persistent history (issue 15): a commit with a ``HistoryRecord`` appends
/// one ``HistoryTransaction`` in its own transaction, with increasing tokens that survive
/// reopening and trimming.
@Suite("history store")
struct HistoryStoreTests {
    static let schema = TestModels.schema.storeSchema

    /// The engine on `store`, as a history store.
    static func open(_ store: TestStore) throws -> any HistoryStore {
        let engine = try store.configuration.open(schema)
        guard let history = engine as? any HistoryStore else {
            engine.close()
            throw StrataError.misuse("the \(store.kind) engine keeps no history")
        }
        return history
    }

    /// An Account row with `name` and `balance` (the other columns at their defaults).
    static func account(_ key: Int64, _ name: String, balance: Int64 = 0, version: Int64 = 0) -> RowWrite {
        let values = schema.entities[0].columns.map { column -> StoredValue in
            switch column.name {
            case "name": .text(name)
            case "currency": .text("EUR")
            case "balance": .integer(balance)
            default: .null
            }
        }
        return RowWrite(entity: 0, key: key, expectedVersion: version, values: ContiguousArray(values))
    }

    /// A change set inserting `rows`, described by a history record of `author`.
    static func inserting(_ rows: [RowWrite], author: String?) -> ChangeSet {
        var changes = ChangeSet()
        changes.inserts = rows
        changes.history = HistoryRecord(
            author: author,
            changes: rows.map {
                HistoryChange(entity: "Account", key: $0.key, kind: .insert, changedProperties: ["name", "balance"])
            })
        return changes
    }

    @Test(
        "a commit with history appends one transaction: tokens increase, author and changes round-trip",
        arguments: EngineKind.allCases)
    func appendAndReadBack(kind: EngineKind) throws {
        let store = try TestStore(kind)
        let engine = try Self.open(store)
        defer { engine.close() }
        #expect(try engine.currentHistoryToken() == 0)
        #expect(try engine.history(after: 0, limit: nil) == [])
        let before = Date()
        try engine.commit(Self.inserting([Self.account(1, "a"), Self.account(2, "b")], author: "importer"))

        var delete = ChangeSet()
        delete.deletes = [RowVersionCheck(entity: 0, key: 1, expectedVersion: 1)]
        let tombstone: [String: RecordedValue] = [
            "name": RecordedValue(.text("a")), "balance": RecordedValue(.integer(-3)),
            "rate": RecordedValue(.real(0.25)), "photo": RecordedValue(.blob(Data([0, 1, 255]))),
            "note": RecordedValue(.null),
        ]
        let deletion = HistoryChange(
            entity: "Account", key: 1, kind: .delete, changedProperties: [], tombstone: tombstone)
        let update = HistoryChange(entity: "Account", key: 2, kind: .update, changedProperties: ["balance"])
        delete.updates = [Self.account(2, "b", balance: 5, version: 1)]
        delete.history = HistoryRecord(author: nil, changes: [deletion, update])
        try engine.commit(delete)
        let after = Date()

        let history = try engine.history(after: 0, limit: nil)
        try #require(history.count == 2)
        #expect(history[0].token > 0)
        #expect(history[1].token > history[0].token)
        #expect(try engine.currentHistoryToken() == history[1].token)
        #expect(history[0].author == "importer")
        #expect(history[1].author == nil)
        #expect(history[0].changes.map(\.key) == [1, 2])
        #expect(history[0].changes.allSatisfy { $0.kind == .insert && $0.changedProperties == ["name", "balance"] })
        #expect(history[1].changes == [deletion, update])
        #expect(history[1].changes[0].tombstone == tombstone)
        for transaction in history {
            #expect(
                transaction.timestamp.timeIntervalSince1970 >= before.timeIntervalSince1970 - 0.001
                    && transaction.timestamp.timeIntervalSince1970 <= after.timeIntervalSince1970 + 0.001)
        }
        #expect(try engine.history(after: history[0].token, limit: nil) == [history[1]])
        #expect(try engine.history(after: history[1].token, limit: nil) == [])
    }

    @Test("a commit without history appends nothing", arguments: EngineKind.allCases)
    func noHistoryAppendsNothing(kind: EngineKind) throws {
        let store = try TestStore(kind)
        let engine = try Self.open(store)
        defer { engine.close() }
        var plain = ChangeSet()
        plain.inserts = [Self.account(1, "a")]
        try engine.commit(plain)
        #expect(try engine.currentHistoryToken() == 0)
        #expect(try engine.history(after: 0, limit: nil) == [])
        try engine.commit(Self.inserting([Self.account(2, "b")], author: "x"))
        var update = ChangeSet()
        update.updates = [Self.account(1, "a", balance: 1, version: 1)]
        try engine.commit(update)
        let history = try engine.history(after: 0, limit: nil)
        #expect(history.count == 1)
        #expect(history.first?.changes.map(\.key) == [2])
        #expect(try engine.currentHistoryToken() == history.first?.token)
    }

    @Test(
        "a change set that writes no data (empty, or verifies only) appends no history, even with a record",
        arguments: EngineKind.allCases)
    func noDataNoHistory(kind: EngineKind) throws {
        let store = try TestStore(kind)
        let engine = try Self.open(store)
        defer { engine.close() }
        var plain = ChangeSet()
        plain.inserts = [Self.account(1, "a")]
        try engine.commit(plain)
        let record = HistoryRecord(
            author: "idle", changes: [HistoryChange(entity: "Account", key: 1, kind: .update, changedProperties: [])])

        var empty = ChangeSet()
        empty.history = record
        try engine.commit(empty)
        var verify = ChangeSet()
        verify.verifies = [RowVersionCheck(entity: 0, key: 1, expectedVersion: 1)]
        verify.history = record
        try engine.commit(verify)
        verify.verifies = [RowVersionCheck(entity: 0, key: 1, expectedVersion: 9)]
        guard case .conflict = strataError({ try engine.commit(verify) }) else {
            Issue.record("a stale verify was not a conflict")
            return
        }
        #expect(try engine.currentHistoryToken() == 0)
        #expect(try engine.history(after: 0, limit: nil) == [])

        // The next commit that writes gets the first token.
        try engine.commit(Self.inserting([Self.account(2, "b")], author: "writer"))
        #expect(try engine.history(after: 0, limit: nil).map(\.token) == [1])
    }

    @Test("a commit that fails (a version conflict, a unique clash) appends nothing", arguments: EngineKind.allCases)
    func failedCommitsAppendNothing(kind: EngineKind) throws {
        let store = try TestStore(kind)
        let engine = try Self.open(store)
        defer { engine.close() }
        try engine.commit(Self.inserting([Self.account(1, "a")], author: "first"))
        let start = try engine.currentHistoryToken()

        var stale = Self.inserting([Self.account(2, "b")], author: "stale")
        stale.updates = [Self.account(1, "a", balance: 9, version: 7)]
        guard case .conflict = strataError({ try engine.commit(stale) }) else {
            Issue.record("a stale update was not a conflict")
            return
        }
        let clash = Self.inserting([Self.account(3, "a")], author: "clash")
        guard case .constraintViolation = strataError({ try engine.commit(clash) }) else {
            Issue.record("a duplicate unique name was not a constraint violation")
            return
        }
        #expect(try engine.currentHistoryToken() == start)
        #expect(try engine.history(after: start, limit: nil) == [])
        #expect(try engine.history(after: 0, limit: nil).map(\.author) == ["first"])

        try engine.commit(Self.inserting([Self.account(4, "d")], author: "next"))
        let next = try engine.history(after: start, limit: nil)
        #expect(next.map(\.author) == ["next"])
        #expect(next.first.map { $0.token > start } == true)
    }

    @Test("tokens keep increasing across reopening and after deleting history", arguments: EngineKind.allCases)
    func tokensAreNeverReused(kind: EngineKind) throws {
        let store = try TestStore(kind)
        var tokens: [Int64] = []
        do {
            let engine = try Self.open(store)
            defer { engine.close() }
            for key in Int64(1)...3 {
                try engine.commit(Self.inserting([Self.account(key, "n\(key)")], author: nil))
            }
            tokens = try engine.history(after: 0, limit: nil).map(\.token)
        }
        try #require(tokens.count == 3)
        let engine = try Self.open(store)
        defer { engine.close() }
        #expect(try engine.history(after: 0, limit: nil).map(\.token) == tokens)
        #expect(try engine.currentHistoryToken() == tokens[2])

        try engine.commit(Self.inserting([Self.account(4, "n4")], author: nil))
        let fourth = try #require(try engine.history(after: tokens[2], limit: nil).first?.token)
        #expect(fourth > tokens[2])

        #expect(try engine.deleteHistory(before: tokens[1], force: false) == tokens[1])
        #expect(try engine.history(after: 0, limit: nil).map(\.token) == [tokens[1], tokens[2], fourth])
        // Deleting every transaction keeps the current token, and the next one is larger still.
        #expect(try engine.deleteHistory(before: .max, force: false) == fourth + 1)
        #expect(try engine.history(after: 0, limit: nil) == [])
        #expect(try engine.currentHistoryToken() == fourth)
        try engine.commit(Self.inserting([Self.account(5, "n5")], author: nil))
        let fifth = try #require(try engine.history(after: 0, limit: nil).first?.token)
        #expect(fifth > fourth)
        engine.close()

        let reopened = try Self.open(store)
        defer { reopened.close() }
        #expect(try reopened.currentHistoryToken() == fifth)
        try reopened.commit(Self.inserting([Self.account(6, "n6")], author: nil))
        #expect(try reopened.history(after: 0, limit: nil).map(\.token).last.map { $0 > fifth } == true)
    }

    @Test(
        "history(after:limit:) returns the transactions after a token, oldest first, at most limit",
        arguments: EngineKind.allCases)
    func afterAndLimit(kind: EngineKind) throws {
        let store = try TestStore(kind)
        let engine = try Self.open(store)
        defer { engine.close() }
        for key in Int64(1)...5 {
            try engine.commit(Self.inserting([Self.account(key, "n\(key)")], author: "a\(key)"))
        }
        let all = try engine.history(after: 0, limit: nil)
        #expect(all.map(\.author) == ["a1", "a2", "a3", "a4", "a5"])
        #expect(zip(all, all.dropFirst()).allSatisfy { $0.token < $1.token })
        #expect(try engine.history(after: 0, limit: 2) == Array(all.prefix(2)))
        #expect(try engine.history(after: all[1].token, limit: 2) == Array(all[2...3]))
        #expect(try engine.history(after: all[3].token, limit: 10) == [all[4]])
        #expect(try engine.history(after: 0, limit: 0) == [])
        #expect(try engine.history(after: all[4].token, limit: nil) == [])
        #expect(try engine.history(after: -5, limit: 1) == [all[0]])
    }

    @Test("two engines on one store share the tokens and see each other's history", arguments: EngineKind.allCases)
    func twoEnginesShareHistory(kind: EngineKind) throws {
        let store = try TestStore(kind)
        let first = try Self.open(store)
        defer { first.close() }
        let second = try Self.open(store)
        defer { second.close() }
        try first.commit(Self.inserting([Self.account(1, "a")], author: "first"))
        try second.commit(Self.inserting([Self.account(2, "b")], author: "second"))
        try first.commit(Self.inserting([Self.account(3, "c")], author: "first"))
        let seenByFirst = try first.history(after: 0, limit: nil)
        #expect(seenByFirst.map(\.author) == ["first", "second", "first"])
        #expect(Set(seenByFirst.map(\.token)).count == 3)
        #expect(try second.history(after: 0, limit: nil) == seenByFirst)
        #expect(try second.currentHistoryToken() == seenByFirst.last?.token)
    }
}
