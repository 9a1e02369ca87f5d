import Foundation
import Strata
import StrataStorage
import Testing

/// One commit of thousands of updates, deletes, touches, links and unlinks (issue 25: the
/// PostgreSQL engine writes them set-wise, in batches of 2,000), checked row by row and link by
/// link afterwards on every engine; and the checks of a commit on such change sets: a stale
/// version among thousands, a key named twice.
@Suite("Engine bulk writes")
struct EngineBulkWriteTests {
    /// 5,000 rows: two full batches of 2,000 and a partial one.
    static let count: Int64 = 5_000
    static let updated = 1...count
    static let deleted = (count + 1)...(2 * count)
    static let touched = (2 * count + 1)...(2 * count + 2_000)
    static let txns: [Int64] = Array(1...10)

    /// The transaction account `key` links before the commit, and after it when updated.
    static func linkedBefore(_ key: Int64) -> Int64 { key % 10 + 1 }
    static func linkedAfter(_ key: Int64) -> Int64 { (key + 1) % 10 + 1 }

    /// Accounts 1…12,000 (`a<key>`, balance key), ten transactions, each account linked to one.
    static func makeEngine(_ store: TestStore) throws -> any StorageEngine {
        let engine = try store.configuration.open(Fixtures.schema)
        var changes = ChangeSet()
        changes.inserts = (1...touched.upperBound).map { Fixtures.account($0, "a\($0)", balance: $0) }
        changes.inserts += txns.map { Fixtures.txn($0, amount: $0, account: nil) }
        changes.links = (1...touched.upperBound).map {
            JoinLink(join: Fixtures.accountTxns, leftKey: $0, rightKey: linkedBefore($0))
        }
        try engine.commit(changes)
        return engine
    }

    /// The updated values of account `key`: the name of a deleted account (so unique values move
    /// from deleted rows to updated ones within the commit), a new balance and memo.
    static func updatedAccount(_ key: Int64) -> RowWrite {
        Fixtures.account(key, "a\(key + count)", balance: key * 2, memo: "m\(key)", version: 1)
    }

    @Test(
        "one commit of 5,000 updates, 5,000 deletes, 2,000 touches, 5,000 unlinks and 5,000 links stores exactly them",
        arguments: EngineKind.allCases)
    func bulkCommit(kind: EngineKind) throws {
        let store = try TestStore(kind)
        let engine = try Self.makeEngine(store)
        defer { engine.close() }
        var changes = ChangeSet()
        changes.updates = Self.updated.map(Self.updatedAccount)
        changes.deletes = Self.deleted.map { RowVersionCheck(entity: Fixtures.account, key: $0, expectedVersion: 1) }
        changes.touches = Self.touched.map { RowVersionCheck(entity: Fixtures.account, key: $0, expectedVersion: 1) }
        changes.unlinks = Self.updated.map {
            JoinLink(join: Fixtures.accountTxns, leftKey: $0, rightKey: Self.linkedBefore($0))
        }
        changes.links = Self.updated.map {
            JoinLink(join: Fixtures.accountTxns, leftKey: $0, rightKey: Self.linkedAfter($0))
        }
        try engine.commit(changes)

        let rows = try allRows(engine, Fixtures.account)
        #expect(rows.map(\.key) == Array(Self.updated) + Array(Self.touched))
        for row in rows {
            #expect(row.version == 2, "account \(row.key)")
            let expected =
                Self.updated.contains(row.key)
                ? Self.updatedAccount(row.key).values
                : Fixtures.account(row.key, "a\(row.key)", balance: row.key).values
            #expect(row.values == expected, "account \(row.key)")
        }
        let reader = try engine.makeReader()
        defer { reader.close() }
        for txn in Self.txns {
            let expected =
                (Array(Self.updated).filter { Self.linkedAfter($0) == txn })
                + Array(Self.touched).filter { Self.linkedBefore($0) == txn }
            #expect(
                try reader.linkedKeys(join: Fixtures.accountTxns, from: .right, key: txn) == expected, "txn \(txn)")
        }
    }

    @Test(
        "one stale row among 5,000 updates and 5,000 deletes: .conflict naming it alone, nothing written",
        arguments: EngineKind.allCases)
    func staleRowInABulkCommit(kind: EngineKind) throws {
        let store = try TestStore(kind)
        let engine = try Self.makeEngine(store)
        defer { engine.close() }
        // Another writer updates account 4,321 first.
        var other = ChangeSet()
        other.updates = [Fixtures.account(4_321, "other", balance: -1, version: 1)]
        try engine.commit(other)
        let before = try allRows(engine, Fixtures.account)
        var changes = ChangeSet()
        changes.updates = Self.updated.map(Self.updatedAccount)
        changes.deletes = Self.deleted.map { RowVersionCheck(entity: Fixtures.account, key: $0, expectedVersion: 1) }
        let error = strataError { try engine.commit(changes) }
        guard case .conflict(let conflicts)? = error else {
            Issue.record("expected .conflict, got \(String(describing: error))")
            return
        }
        #expect(conflicts.map(\.objectID.primaryKey) == [4_321])
        #expect(conflicts.map(\.expectedVersion) == [1])
        #expect(conflicts.map(\.storedVersion) == [2])
        #expect(try allRows(engine, Fixtures.account) == before)
    }

    @Test(
        "a key named twice in one commit's deletes, updates or touches is a .conflict, nothing written",
        arguments: EngineKind.allCases)
    func keyNamedTwice(kind: EngineKind) throws {
        let store = try TestStore(kind)
        let engine = try Self.makeEngine(store)
        defer { engine.close() }
        let before = try allRows(engine, Fixtures.account)
        var deletes = ChangeSet()
        deletes.deletes = (Self.deleted.map { $0 } + [Self.deleted.upperBound]).map {
            RowVersionCheck(entity: Fixtures.account, key: $0, expectedVersion: 1)
        }
        var updates = ChangeSet()
        updates.updates = (Self.updated.map { $0 } + [7]).enumerated().map { index, key in
            Fixtures.account(key, "u\(index)", version: 1)
        }
        var touches = ChangeSet()
        touches.touches = (Array(Self.touched) + [Self.touched.lowerBound]).map {
            RowVersionCheck(entity: Fixtures.account, key: $0, expectedVersion: 1)
        }
        for (name, changes) in [("deletes", deletes), ("updates", updates), ("touches", touches)] {
            let error = strataError { try engine.commit(changes) }
            guard case .conflict(let conflicts)? = error else {
                Issue.record("\(name): expected .conflict, got \(String(describing: error))")
                continue
            }
            #expect(!conflicts.isEmpty, "\(name)")
            #expect(try allRows(engine, Fixtures.account) == before, "\(name)")
        }
    }
}
