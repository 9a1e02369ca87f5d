import Foundation
import Strata
import StrataSQLite
import StrataStorage
import Testing

@Suite("SQLiteEngine readers, keys and lifecycle")
struct SQLiteEngineSnapshotTests {
    @Test func aReaderDoesNotSeeLaterCommits() throws {
        let store = try TemporarySQLiteStore()
        let engine = try store.open()
        defer { engine.close() }
        try engine.commit(Fixtures.inserts([Fixtures.account(1, "A")]))

        let before = try engine.makeReader()
        var changes = Fixtures.inserts([Fixtures.account(2, "B")])
        changes.updates = [Fixtures.account(1, "A", balance: 50, version: 1)]
        try engine.commit(changes)

        #expect(try before.count(entity: Fixtures.account, filter: nil) == 1)
        #expect(try before.row(entity: Fixtures.account, key: 2) == nil)
        #expect(try before.row(entity: Fixtures.account, key: 1)?.version == 1)
        before.close()
        before.close() // idempotent

        let after = try engine.makeReader()
        defer { after.close() }
        #expect(try after.count(entity: Fixtures.account, filter: nil) == 2)
        #expect(try after.row(entity: Fixtures.account, key: 1)?.values[1] == .integer(50))
    }

    @Test func manyReadersAtOnceDoNotBlock() throws {
        let store = try TemporarySQLiteStore()
        let engine = try store.open(options: SQLiteOptions(readerCount: 1))
        defer { engine.close() }
        try engine.commit(Fixtures.inserts([Fixtures.account(1, "A")]))
        let readers = try (0..<6).map { _ in try engine.makeReader() }
        for reader in readers { #expect(try reader.count(entity: Fixtures.account, filter: nil) == 1) }
        for reader in readers { reader.close() }
        let again = try engine.makeReader()
        #expect(try again.row(entity: Fixtures.account, key: 1) != nil)
        again.close()
    }

    @Test func allocatedKeysNeverRepeatAcrossReopen() throws {
        let store = try TemporarySQLiteStore()
        var seen = Set<Int64>()
        var first: Int64?
        for _ in 0..<3 {
            let engine = try store.open()
            for count in [1, 5, 300, 0, 2] {
                let keys = try engine.allocateKeys(entity: Fixtures.account, count: count)
                #expect(keys.count == count)
                first = first ?? keys.first
                for key in keys { #expect(seen.insert(key).inserted, "key \(key) repeated") }
            }
            #expect(try engine.allocateKeys(entity: Fixtures.txn, count: 1).allSatisfy { $0 > 0 })
            engine.close()
        }
        #expect(first == 1)
        #expect(seen.allSatisfy { $0 > 0 })
    }

    @Test func twoEnginesOnOneFileShareTheKeyCounter() throws {
        let store = try TemporarySQLiteStore()
        let one = try store.open()
        let two = try store.open()
        defer {
            one.close()
            two.close()
        }
        let a = try one.allocateKeys(entity: Fixtures.account, count: 10)
        let b = try two.allocateKeys(entity: Fixtures.account, count: 10)
        let c = try one.allocateKeys(entity: Fixtures.account, count: 1000)
        #expect(Set(a).isDisjoint(with: b))
        #expect(Set(a).isDisjoint(with: c))
        #expect(Set(b).isDisjoint(with: c))
        #expect(one.storeIdentifier == two.storeIdentifier)
    }

    @Test func reopeningKeepsDataIdentifierAndVersion() throws {
        let store = try TemporarySQLiteStore()
        var engine = try store.open(Fixtures.makeSchema(version: 3))
        let identifier = engine.storeIdentifier
        #expect(engine.schemaVersion == 3)
        try engine.commit(Fixtures.inserts([Fixtures.account(1, "Kept", balance: -5, memo: "m")]))
        engine.close()

        engine = try store.open(Fixtures.makeSchema(version: 3))
        defer { engine.close() }
        #expect(engine.storeIdentifier == identifier)
        #expect(engine.schemaVersion == 3)
        #expect(
            try allRows(engine, Fixtures.account).first?.values == [
                .text("Kept"), .integer(-5), .text("m"), .integer(1),
            ])
        let other = try TemporarySQLiteStore()
        let fresh = try other.open()
        #expect(fresh.storeIdentifier != identifier)
        fresh.close()
    }

    @Test func closeIsIdempotentAndLaterCallsAreMisuse() throws {
        let store = try TemporarySQLiteStore()
        let engine = try store.open()
        let reader = try engine.makeReader()
        engine.close()
        engine.close()
        // A reader made before close still finishes its snapshot.
        #expect(try reader.count(entity: Fixtures.account, filter: nil) == 0)
        reader.close()
        guard case .misuse = strataError({ _ = try engine.makeReader() }) else {
            Issue.record("makeReader after close")
            return
        }
        guard case .misuse = strataError({ try engine.commit(Fixtures.inserts([Fixtures.account(1, "x")])) }) else {
            Issue.record("commit after close")
            return
        }
        guard case .misuse = strataError({ _ = try engine.allocateKeys(entity: 0, count: 1) }) else {
            Issue.record("allocateKeys after close")
            return
        }
        guard case .misuse = strataError({ _ = try reader.row(entity: 0, key: 1) }) else {
            Issue.record("reader after close")
            return
        }
    }
}
