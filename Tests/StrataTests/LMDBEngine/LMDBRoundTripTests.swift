import Foundation
import Strata
import StrataStorage
import Testing

@Suite("LMDB round trips and metadata")
struct LMDBRoundTripTests {
    @Test("every storage class survives a round trip bit for bit")
    func roundTrip() throws {
        let engine = try LMDBFixture.open(LMDBFixture.directory())
        defer { engine.close() }
        let big = Data((0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        let rows: [[StoredValue]] = [
            [.integer(.min), .real(-0.0), .text(""), .blob(Data()), .null],
            [.integer(.max), .real(.infinity), .text("👩‍👩‍👧 ünïcödé e\u{301} é \0 nul"), .blob(big), .text("code")],
            [.integer(0), .real(-.infinity), .text("plain"), .blob(Data([0, 0xFF, 0])), .null],
            [.null, .real(.leastNonzeroMagnitude), .null, .null, .null],
            [
                .integer(-1), .real(.greatestFiniteMagnitude), .text(String(repeating: "x", count: 300)),
                .blob(Data([1])), .text(""),
            ],
        ]
        for (offset, values) in rows.enumerated() {
            try LMDBFixture.insert(engine, LMDBFixture.sample, Int64(offset + 1), values)
        }
        let reader = try engine.makeReader()
        defer { reader.close() }
        for (offset, values) in rows.enumerated() {
            let row = try #require(try reader.row(entity: LMDBFixture.sample, key: Int64(offset + 1)))
            #expect(row.version == 1)
            #expect(row.values == ContiguousArray(values))
            for (stored, expected) in zip(row.values, values) {
                if case .real(let a) = stored, case .real(let b) = expected { #expect(a.bitPattern == b.bitPattern) }
            }
        }
        #expect(try reader.row(entity: LMDBFixture.sample, key: 99) == nil)
    }

    @Test("the store keeps its identifier; another schema version is refused; closed engines refuse calls")
    func metadata() throws {
        let directory = LMDBFixture.directory()
        let first = try LMDBFixture.open(directory)
        let identifier = first.storeIdentifier
        #expect(first.schemaVersion == 1)
        first.close()
        first.close()
        #expect(
            LMDBFixture.strataError { _ = try first.makeReader() }.map { if case .misuse = $0 { true } else { false } }
                == true)
        #expect(
            LMDBFixture.strataError { try first.commit(ChangeSet()) }.map {
                if case .misuse = $0 { true } else { false }
            } == true)
        let second = try LMDBFixture.open(directory)
        #expect(second.storeIdentifier == identifier)
        second.close()
        let error = LMDBFixture.strataError { _ = try LMDBFixture.open(directory, version: 2) }
        #expect(error == .schemaMismatch(storeVersion: 1, modelVersion: 2))
    }

    @Test("allocated keys are positive, disjoint and survive reopening")
    func allocateKeys() throws {
        let directory = LMDBFixture.directory()
        var seen = Set<Int64>()
        for _ in 0..<2 {
            let engine = try LMDBFixture.open(directory)
            for count in [1, 5, 300, 0, 2] {
                let range = try engine.allocateKeys(entity: LMDBFixture.account, count: count)
                #expect(range.count == count)
                for key in range {
                    #expect(key > 0)
                    #expect(seen.insert(key).inserted)
                }
            }
            engine.close()
        }
    }

    @Test("links round trip and deleting a row removes its links")
    func joins() throws {
        let engine = try LMDBFixture.open(LMDBFixture.directory())
        defer { engine.close() }
        var changes = ChangeSet()
        changes.inserts = [
            RowWrite(entity: 0, key: 1, expectedVersion: 0, values: [.text("A"), .integer(0), .null]),
            RowWrite(entity: 1, key: 10, expectedVersion: 0, values: [.integer(5), .integer(1)]),
            RowWrite(entity: 1, key: 11, expectedVersion: 0, values: [.integer(6), .integer(1)]),
        ]
        changes.links = [JoinLink(join: 0, leftKey: 1, rightKey: 11), JoinLink(join: 0, leftKey: 1, rightKey: 10)]
        try engine.commit(changes)
        var reader = try engine.makeReader()
        #expect(try reader.linkedKeys(join: 0, from: .left, key: 1) == [10, 11])
        #expect(try reader.linkedKeys(join: 0, from: .right, key: 11) == [1])
        reader.close()
        var unlink = ChangeSet()
        unlink.unlinks = [JoinLink(join: 0, leftKey: 1, rightKey: 10)]
        try engine.commit(unlink)
        var delete = ChangeSet()
        delete.deletes = [RowVersionCheck(entity: 1, key: 11, expectedVersion: 1)]
        try engine.commit(delete)
        reader = try engine.makeReader()
        defer { reader.close() }
        #expect(try reader.linkedKeys(join: 0, from: .left, key: 1) == [])
        #expect(try reader.linkedKeys(join: 0, from: .right, key: 11) == [])
        #expect(
            try reader.rows(for: FetchPlan(entity: 1, filter: .compare(column: 1, .equal, .integer(1)))).map(\.key) == [
                10
            ])
    }
}
