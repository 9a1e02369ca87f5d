import Foundation
import Strata
import StrataStorage
import Testing

/// The engines' read paths for faults, batch faults and prefetching (issue 16): an equality on a
/// to-one column, an integer membership on it, and the links of many keys in one pass. Each is
/// checked against the reference semantics (`FetchPlan.apply`, `linkedKeys` per key) on real
/// stores of every engine.
///
/// The data set scatters each account's transactions over the key range, so a read that returned
/// them grouped by account rather than by primary key would fail; some transactions have no
/// account, some accounts none, and some keys exist nowhere.
@Suite("Engine batch reads")
struct EngineBatchReadTests {
    static let accounts: [Int64] = Array(1...30)
    static let txns: [Int64] = Array(1...400)

    /// The transaction's account: none for every tenth, otherwise scattered over accounts 1–29
    /// (account 30 has none).
    static func owner(of txn: Int64) -> Int64? { txn % 10 == 0 ? nil : (txn * 7) % 29 + 1 }

    /// Account `a` links transaction `t` when `(a * t) % 13 == 0`; accounts 13 and 26 link many,
    /// the rest few, and transactions 1–12 none.
    static func linked(_ account: Int64, _ txn: Int64) -> Bool { txn > 12 && (account * txn) % 13 == 0 }

    /// Opens a store of `kind` with the engine fixture schema, filled with the data set.
    static func makeEngine(_ store: TestStore) throws -> any StorageEngine {
        let engine = try store.configuration.open(Fixtures.schema)
        var changes = ChangeSet()
        changes.inserts = accounts.map { Fixtures.account($0, "account \($0)") }
        changes.inserts += txns.map { Fixtures.txn($0, amount: $0 * 3, account: owner(of: $0)) }
        for account in accounts {
            for txn in txns where linked(account, txn) {
                changes.links.append(JoinLink(join: Fixtures.accountTxns, leftKey: account, rightKey: txn))
            }
        }
        try engine.commit(changes)
        return engine
    }

    static let accountColumn = 1

    /// The rows of `plan` by the reference: every row of the entity, filtered and ordered in memory.
    static func expected(_ plan: FetchPlan, _ reader: any StoreReader) throws -> [Int64] {
        plan.apply(to: try reader.rows(for: FetchPlan(entity: plan.entity))).map(\.key)
    }

    /// The keys of the transactions whose account is one of `values`, all integers, in key order:
    /// what the reference (``expected(_:_:)``) gives for such a membership, found through a set.
    static func expectedIntegerMembership(_ values: [StoredValue], _ reader: any StoreReader) throws -> [Int64] {
        let keys = Set(
            values.map { value -> Int64 in
                guard case .integer(let key) = value else { preconditionFailure("integers only") }
                return key
            })
        return try reader.rows(for: FetchPlan(entity: Fixtures.txn)).filter { row in
            if case .integer(let account) = row.values[accountColumn] { return keys.contains(account) }
            return false
        }.map(\.key)
    }

    /// The keys and values `forEachRow` streams for `plan`, copied out row by row.
    static func streamed(_ plan: FetchPlan, _ reader: any StoreReader) throws -> [StoredRow] {
        var rows: [StoredRow] = []
        try reader.forEachRow(for: plan) { rows.append($0) }
        return rows
    }

    @Test(
        "a fault's equality on the account column gives the reference rows, each value intact",
        arguments: EngineKind.allCases)
    func equality(kind: EngineKind) throws {
        let store = try TestStore(kind)
        let engine = try Self.makeEngine(store)
        defer { engine.close() }
        let reader = try engine.makeReader()
        defer { reader.close() }
        let everyRow = Dictionary(
            uniqueKeysWithValues: try reader.rows(for: FetchPlan(entity: Fixtures.txn)).map {
                ($0.key, $0)
            })
        // Twice over, so the second round reuses every cached statement with other values bound.
        for _ in 0..<2 {
            for account in [0, 31, -5] + Self.accounts {
                let plan = FetchPlan(
                    entity: Fixtures.txn, filter: .compare(column: Self.accountColumn, .equal, .integer(account)))
                let rows = try Self.streamed(plan, reader)
                let expected = try Self.expected(plan, reader)
                #expect(rows.map(\.key) == expected, "account \(account)")
                #expect(try reader.rows(for: plan).map(\.key) == expected, "account \(account)")
                #expect(rows.allSatisfy { everyRow[$0.key] == $0 }, "account \(account)")
                #expect(rows.count == Self.txns.filter { Self.owner(of: $0) == account }.count)
            }
        }
        // The same column with other operators and a null test, which share the cache's column.
        for filter in [
            Filter.compare(column: Self.accountColumn, .lessThan, .integer(4)),
            .compare(column: Self.accountColumn, .notEqual, .integer(4)),
            .isNull(column: Self.accountColumn), .isNotNull(column: Self.accountColumn),
            .compare(column: Self.accountColumn, .equal, .real(4)),
            .compare(column: Self.accountColumn, .equal, .text("4")),
        ] {
            let plan = FetchPlan(entity: Fixtures.txn, filter: filter)
            #expect(try Self.streamed(plan, reader).map(\.key) == Self.expected(plan, reader), "\(filter)")
        }
        // A column the entity lacks is refused, on the fast path as on the general one.
        #expect(throws: StrataError.self) {
            try reader.rows(for: FetchPlan(entity: Fixtures.txn, filter: .compare(column: 9, .equal, .integer(1))))
        }
    }

    @Test("a batch's integer membership gives the reference rows in primary-key order", arguments: EngineKind.allCases)
    func membership(kind: EngineKind) throws {
        let store = try TestStore(kind)
        let engine = try Self.makeEngine(store)
        defer { engine.close() }
        let reader = try engine.makeReader()
        defer { reader.close() }
        let huge = (1...100_000).map { StoredValue.integer(Int64($0) * 3 - 50_000) }
        let lists: [(String, [StoredValue])] = [
            ("every account", Self.accounts.map(StoredValue.integer)),
            ("a few, descending, repeated", [.integer(9), .integer(3), .integer(9), .integer(27), .integer(3)]),
            ("empty", []),
            ("only null", [.null]),
            ("null and text among them", [.null, .integer(5), .text("6"), .blob(Data([7])), .integer(6)]),
            ("a real among them", [.integer(5), .real(6), .real(7.5)]),
            ("no such account", [.integer(0), .integer(-1), .integer(31), .integer(.min), .integer(.max)]),
            ("the ends of Int64 with real ones", [.integer(.min), .integer(2), .integer(.max)]),
            ("100,000 keys", huge),
        ]
        for (name, values) in lists {
            let plan = FetchPlan(entity: Fixtures.txn, filter: .isIn(column: Self.accountColumn, values: values))
            // The reference compares each row with every value: for the 100,000 keys, integers only,
            // the same rows come from a set (the reference would hold a test thread for seconds).
            let expected =
                values.count > 1_000
                ? try Self.expectedIntegerMembership(values, reader) : try Self.expected(plan, reader)
            #expect(try Self.streamed(plan, reader).map(\.key) == expected, "\(name)")
            #expect(try reader.rows(for: plan).map(\.key) == expected, "\(name)")
            #expect(try reader.count(entity: Fixtures.txn, filter: plan.filter) == expected.count, "\(name)")
            // Without key order: the same rows, each once, in any order.
            var anyOrder = plan
            anyOrder.inKeyOrder = false
            #expect(try Self.streamed(anyOrder, reader).map(\.key).sorted() == expected, "\(name), any order")
            #expect(try reader.rows(for: anyOrder).map(\.key).sorted() == expected, "\(name), any order")
        }
        let everyAccount = FetchPlan(
            entity: Fixtures.txn,
            filter: .isIn(column: Self.accountColumn, values: Self.accounts.map(StoredValue.integer)))
        #expect(try Self.streamed(everyAccount, reader).count == Self.txns.filter { Self.owner(of: $0) != nil }.count)
        // A body that stops the read gets its own error back, and the next read works.
        struct Stop: Error {}
        var seen = 0
        #expect(throws: Stop.self) {
            try reader.forEachRow(for: everyAccount) { _ in
                seen += 1
                if seen == 3 { throw Stop() }
            }
        }
        #expect(seen == 3)
        #expect(try Self.streamed(everyAccount, reader).map(\.key) == Self.expected(everyAccount, reader))
    }

    @Test("forEachLink gives linkedKeys of each key, grouped by key, both sides", arguments: EngineKind.allCases)
    func links(kind: EngineKind) throws {
        let store = try TestStore(kind)
        let engine = try Self.makeEngine(store)
        defer { engine.close() }
        let reader = try engine.makeReader()
        defer { reader.close() }
        let keyLists: [(String, [Int64])] = [
            ("every key", Array(1...400)),
            ("keys with no links", [1, 2, 3, 12]),
            ("keys that exist nowhere", [-3, 0, 401, 100_000]),
            ("a few", [2, 13, 26]),
            ("many, most missing", Array(-5_000...15_000)),
        ]
        for side in [JoinSide.left, .right] {
            for (name, keys) in keyLists {
                var links: [Int64: [Int64]] = [:]
                var order: [Int64] = []
                try reader.forEachLink(join: Fixtures.accountTxns, from: side, keys: keys) { key, linked in
                    if order.last != key { order.append(key) }
                    links[key, default: []].append(linked)
                }
                var expected: [Int64: [Int64]] = [:]
                for key in keys {
                    let linked = try reader.linkedKeys(join: Fixtures.accountTxns, from: side, key: key)
                    if !linked.isEmpty { expected[key] = linked }
                }
                #expect(links == expected, "\(side) \(name)")
                // Grouped by key, keys ascending, each key's links ascending.
                #expect(order == expected.keys.sorted(), "\(side) \(name)")
                #expect(links.values.allSatisfy { $0 == $0.sorted() }, "\(side) \(name)")
            }
            // The whole join is read: every link of the data set, once.
            var count = 0
            try reader.forEachLink(join: Fixtures.accountTxns, from: side, keys: Array(1...400)) { _, _ in count += 1 }
            let total = Self.accounts.reduce(0) { sum, account in
                sum + Self.txns.filter { Self.linked(account, $0) }.count
            }
            #expect(count == total)
            try reader.forEachLink(join: Fixtures.accountTxns, from: side, keys: []) { key, linked in
                Issue.record("no keys, yet a link \(key) → \(linked)")
            }
        }
        #expect(throws: StrataError.self) {
            try reader.forEachLink(join: 5, from: .left, keys: [1]) { _, _ in }
        }
        struct Stop: Error {}
        #expect(throws: Stop.self) {
            try reader.forEachLink(join: Fixtures.accountTxns, from: .left, keys: [13]) { _, _ in throw Stop() }
        }
    }
}
