import Foundation
import Strata
import StrataStorage
import Testing

@testable import StrataLMDB

/// New rows and index entries go in as appends (`MDB_APPEND`) while their keys come in order,
/// and the ordinary way once one does not (`LMDBCommitter.AppendHints`). What must hold either
/// way: every row and index entry is there, a taken key is still a conflict and a unique value
/// still a violation, whatever the key's place against the database's last one.
@Suite("LMDB inserts: appends in key order, the ordinary put otherwise")
struct LMDBAppendTests {
    static let t = 2, r = 1, code = 4

    /// A Sample row: `i` = key, `r` = `real`, `t` = `text`, `code` = `code`.
    static func sample(_ key: Int64, real: Double, text: String, code: String?) -> RowWrite {
        RowWrite(
            entity: LMDBFixture.sample, key: key, expectedVersion: 0,
            values: [.integer(key), .real(real), .text(text), .null, code.map(StoredValue.text) ?? .null])
    }

    static func keys(_ engine: any StorageEngine, _ filter: Filter? = nil) throws -> [Int64] {
        let reader = try engine.makeReader()
        defer { reader.close() }
        return try reader.rows(for: FetchPlan(entity: LMDBFixture.sample, filter: filter)).map(\.key).sorted()
    }

    static func equalText(_ text: String) -> Filter { .compare(column: t, .equal, .text(text)) }
    static func equalCode(_ value: String) -> Filter { .compare(column: code, .equal, .text(value)) }

    @Test("rows committed below the last key, or out of order in one change set, are all there and indexed")
    func outOfOrder() throws {
        let engine = try LMDBFixture.open(LMDBFixture.directory())
        defer { engine.close() }
        // Two ranges handed out in order, committed in the other order: the first range's rows
        // all lie below the table's last key when they arrive.
        let early = try engine.allocateKeys(entity: LMDBFixture.sample, count: 300)
        let late = try engine.allocateKeys(entity: LMDBFixture.sample, count: 300)
        #expect(early.upperBound <= late.lowerBound)
        var second = ChangeSet()
        second.inserts = late.map { Self.sample($0, real: Double($0), text: "late", code: "L\($0)") }
        try engine.commit(second)
        var first = ChangeSet()
        // Ascending for 150 rows, then descending: each run appends, is refused, and goes on the
        // ordinary way.
        let ascending = Array(early.prefix(150))
        let descending = Array(early.dropFirst(150).reversed())
        first.inserts = (ascending + descending).map {
            Self.sample($0, real: -Double($0), text: $0.isMultiple(of: 2) ? "even" : "odd", code: "E\($0)")
        }
        try engine.commit(first)

        #expect(try Self.keys(engine) == Array(early) + Array(late))
        #expect(try Self.keys(engine, Self.equalText("late")) == Array(late))
        #expect(try Self.keys(engine, Self.equalText("even")) == early.filter { $0.isMultiple(of: 2) })
        #expect(try Self.keys(engine, Self.equalText("odd")) == early.filter { !$0.isMultiple(of: 2) })
        #expect(
            try Self.keys(engine, .compare(column: Self.r, .lessThan, .real(0))) == Array(early),
            "the real index holds every early row")
        for key in [early.lowerBound, early.lowerBound + 151, early.upperBound - 1, late.upperBound - 1] {
            let prefix = early.contains(key) ? "E" : "L"
            #expect(try Self.keys(engine, Self.equalCode("\(prefix)\(key)")) == [key])
        }
    }

    @Test("a taken key is a conflict whether it is the last key or below it, and nothing is written")
    func takenKeys() throws {
        let engine = try LMDBFixture.open(LMDBFixture.directory())
        defer { engine.close() }
        var seed = ChangeSet()
        seed.inserts = (1...20).map { Self.sample($0, real: Double($0), text: "seed", code: nil) }
        try engine.commit(seed)
        for taken: Int64 in [20, 7, 1] {
            var changes = ChangeSet()
            changes.inserts = [
                Self.sample(21, real: 0, text: "new", code: nil),
                Self.sample(taken, real: 0, text: "new", code: nil),
            ]
            let error = LMDBFixture.strataError { try engine.commit(changes) }
            guard case .conflict(let conflicts) = error else {
                Issue.record("key \(taken): expected .conflict, got \(String(describing: error))")
                continue
            }
            #expect(conflicts.map(\.objectID.primaryKey) == [taken], "key \(taken)")
            #expect(try Self.keys(engine) == Array(1...20), "key \(taken): nothing written")
        }
    }

    @Test("a unique value equal to the index's last, or below it, is a violation and nothing is written")
    func uniqueValues() throws {
        let engine = try LMDBFixture.open(LMDBFixture.directory())
        defer { engine.close() }
        var seed = ChangeSet()
        seed.inserts = (1...10).map { Self.sample($0, real: Double($0), text: "seed", code: "C\($0 + 10)") }
        try engine.commit(seed)
        // C20 is the index's last entry, C15 one below it; C99 would append.
        for clash in ["C20", "C15"] {
            var changes = ChangeSet()
            changes.inserts = [
                Self.sample(11, real: 0, text: "new", code: "C99"),
                Self.sample(12, real: 0, text: "new", code: clash),
            ]
            let error = LMDBFixture.strataError { try engine.commit(changes) }
            #expect(error?.withoutNative == .constraintViolation(entity: "Sample", attributes: ["code"]), "\(clash)")
            #expect(try Self.keys(engine) == Array(1...10), "\(clash): nothing written")
        }
        var fine = ChangeSet()
        fine.inserts = [
            Self.sample(11, real: 0, text: "new", code: "C99"), Self.sample(12, real: 0, text: "new", code: "C00"),
        ]
        try engine.commit(fine)
        #expect(try Self.keys(engine, Self.equalCode("C99")) == [11])
        #expect(try Self.keys(engine, Self.equalCode("C00")) == [12])
    }
}
