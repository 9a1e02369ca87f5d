import Foundation
import Strata
import StrataSQLite
import StrataStorage
import Testing

@Suite("SQLiteEngine round trips")
struct SQLiteEngineRoundTripTests {
    static let megabyte = Data((0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })

    /// One Sample row per interesting value of each storage class.
    static let samples: [ContiguousArray<StoredValue>] = [
        [.integer(.min), .real(-0.0), .text(""), .blob(Data()), .integer(0)],
        [.integer(.max), .real(.infinity), .text("😀👨‍👩‍👧 ünïcødé"), .blob(megabyte), .integer(1)],
        [.integer(0), .real(-.infinity), .text("e\u{301} vs é"), .blob(Data([0, 255, 0])), .null],
        [.integer(-1), .real(.greatestFiniteMagnitude), .text("a\u{0}b"), .null, .null],
        [.null, .real(.leastNonzeroMagnitude), .text("100% _under_"), .blob(Data([1])), .integer(0)],
        [.integer(42), .real(0.1), .null, .blob(Data("text-like".utf8)), .integer(1)],
        [.null, .null, .null, .null, .null],
        [.integer(7), .real(3), .text("integral real"), .null, .null],
    ]

    @Test func everyStorageClassRoundTrips() throws {
        let store = try TemporarySQLiteStore()
        let engine = try store.open()
        defer { engine.close() }
        let writes = Self.samples.enumerated().map {
            RowWrite(entity: Fixtures.sample, key: Int64($0 + 1), expectedVersion: 0, values: $1)
        }
        try engine.commit(Fixtures.inserts(writes))

        let reader = try engine.makeReader()
        defer { reader.close() }
        for write in writes {
            let row = try #require(try reader.row(entity: Fixtures.sample, key: write.key))
            #expect(row.key == write.key)
            #expect(row.version == 1)
            #expect(row.values == write.values, "row \(write.key)")
            // Storage classes come back exactly, including integral reals.
            for (stored, written) in zip(row.values, write.values) {
                #expect(storageClassOf(stored) == storageClassOf(written))
            }
        }
        #expect(try reader.row(entity: Fixtures.sample, key: 999) == nil)
        let all = try reader.rows(for: FetchPlan(entity: Fixtures.sample))
        #expect(all.map(\.values) == writes.map(\.values))
    }

    @Test func infinitiesAndExtremesSurviveReopen() throws {
        let store = try TemporarySQLiteStore()
        var engine = try store.open()
        let row: ContiguousArray<StoredValue> = [
            .integer(.min), .real(-.infinity), .text("ok"), .blob(Self.megabyte), .integer(1),
        ]
        try engine.commit(
            Fixtures.inserts([RowWrite(entity: Fixtures.sample, key: 5, expectedVersion: 0, values: row)]))
        engine.close()
        engine = try store.open()
        defer { engine.close() }
        #expect(try allRows(engine, Fixtures.sample).first?.values == row)
    }

    @Test func updatesTouchesAndDeletesBumpVersions() throws {
        let store = try TemporarySQLiteStore()
        let engine = try store.open()
        defer { engine.close() }
        try engine.commit(Fixtures.inserts([Fixtures.account(1, "Checking"), Fixtures.account(2, "Savings")]))

        var changes = ChangeSet()
        changes.updates = [Fixtures.account(1, "Checking", balance: 500, memo: "paid", version: 1)]
        changes.touches = [RowVersionCheck(entity: Fixtures.account, key: 2, expectedVersion: 1)]
        try engine.commit(changes)
        var rows = try allRows(engine, Fixtures.account)
        #expect(rows.map(\.version) == [2, 2])
        #expect(rows[0].values == [.text("Checking"), .integer(500), .text("paid"), .integer(1)])
        #expect(rows[1].values == [.text("Savings"), .integer(0), .null, .integer(1)])

        changes = ChangeSet()
        changes.deletes = [RowVersionCheck(entity: Fixtures.account, key: 2, expectedVersion: 2)]
        try engine.commit(changes)
        rows = try allRows(engine, Fixtures.account)
        #expect(rows.map(\.key) == [1])
    }

    @Test func joinsLinkUnlinkAndFollowDeletes() throws {
        let store = try TemporarySQLiteStore()
        let engine = try store.open()
        defer { engine.close() }
        var changes = Fixtures.inserts([
            Fixtures.account(1, "A"), Fixtures.account(2, "B"),
            Fixtures.txn(10, amount: 5, account: 1), Fixtures.txn(11, amount: 6, account: nil),
        ])
        changes.links = [
            JoinLink(join: 0, leftKey: 1, rightKey: 11), JoinLink(join: 0, leftKey: 1, rightKey: 10),
            JoinLink(join: 0, leftKey: 2, rightKey: 10), JoinLink(join: 0, leftKey: 2, rightKey: 10),
        ]
        try engine.commit(changes)
        var reader = try engine.makeReader()
        #expect(try reader.linkedKeys(join: 0, from: .left, key: 1) == [10, 11])
        #expect(try reader.linkedKeys(join: 0, from: .right, key: 10) == [1, 2])
        reader.close()

        changes = ChangeSet()
        changes.unlinks = [JoinLink(join: 0, leftKey: 1, rightKey: 11)]
        changes.deletes = [RowVersionCheck(entity: Fixtures.account, key: 2, expectedVersion: 1)]
        try engine.commit(changes)
        reader = try engine.makeReader()
        defer { reader.close() }
        #expect(try reader.linkedKeys(join: 0, from: .left, key: 1) == [10])
        #expect(try reader.linkedKeys(join: 0, from: .right, key: 10) == [1])
        #expect(try reader.linkedKeys(join: 0, from: .left, key: 2) == [])
        #expect(try reader.linkedKeys(join: 0, from: .right, key: 11) == [])
    }
}

/// The storage class of a value, for exact-class checks (`==` treats -0.0 and 0.0 alike).
private func storageClassOf(_ value: StoredValue) -> String {
    switch value {
    case .null: "null"
    case .integer: "integer"
    case .real: "real"
    case .text: "text"
    case .blob: "blob"
    }
}
