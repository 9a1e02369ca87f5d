import Foundation
import Strata
import StrataStorage
import Testing

@testable import StrataLMDB

/// Set writes rewrite rows through one cursor (`LMDBRowRewriter`: `MDB_SET_KEY`, then
/// `MDB_CURRENT`). Values that grow make LMDB delete and re-insert the row where it stands, and
/// an upsert's inserts split the pages under the open cursor: every row, value, version and index
/// entry must come out as if each row had been read and written on its own.
@Suite("LMDB set writes: rows rewritten in place through one cursor")
struct LMDBRowRewriteTests {
    static let i = 0, r = 1, t = 2, code = 4
    static let long = String(repeating: "grown ", count: 40)

    static func rows(_ engine: any StorageEngine, _ filter: Filter? = nil) throws -> [StoredRow] {
        let reader = try engine.makeReader()
        defer { reader.close() }
        return try reader.rows(for: FetchPlan(entity: LMDBFixture.sample, filter: filter)).sorted { $0.key < $1.key }
    }

    @Test("an upsert that grows 5,000 rows and inserts 1,000 among them, then an update of all")
    func growingRows() throws {
        let engine = try LMDBFixture.open(LMDBFixture.directory())
        defer { engine.close() }
        let stored = try engine.allocateKeys(entity: LMDBFixture.sample, count: 5_000)
        var seed = ChangeSet()
        seed.inserts = stored.map {
            RowWrite(
                entity: LMDBFixture.sample, key: $0, expectedVersion: 0,
                values: [.integer($0), .real(0), .text("s"), .null, .text("C\($0)")])
        }
        try engine.commit(seed)

        // Every stored row's text grows from 1 to 240 bytes; 1,000 new codes are inserted,
        // interleaved with the updates.
        let fresh = try engine.allocateKeys(entity: LMDBFixture.sample, count: 1_000)
        // Keys for the rows that will clash too, as the core hands them out (unused ones are a gap).
        let spare = try engine.allocateKeys(entity: LMDBFixture.sample, count: 5_000)
        var upsertRows: [ContiguousArray<StoredValue>] = []
        var upsertKeys: [Int64] = []
        for (position, key) in stored.enumerated() {
            upsertRows.append([.integer(key), .real(0), .text(Self.long + "\(key)"), .null, .text("C\(key)")])
            upsertKeys.append(spare.lowerBound + Int64(position))
            if position % 5 == 0 {
                let new = fresh.lowerBound + Int64(position / 5)
                upsertRows.append([.integer(new), .real(0), .text("new"), .null, .text("N\(new)")])
                upsertKeys.append(new)
            }
        }
        var upsert = ChangeSet()
        upsert.setWrites = [
            SetWrite(
                entity: LMDBFixture.sample, selection: .matching(nil),
                action: .upsert(
                    SetWrite.Upsert(
                        rows: upsertRows, keys: upsertKeys, uniqueColumns: [Self.code],
                        onClash: .update(columns: [Self.t]))))
        ]
        try engine.commit(upsert)

        let afterUpsert = try Self.rows(engine)
        #expect(afterUpsert.map(\.key) == Array(stored) + Array(fresh))
        for row in afterUpsert {
            let expected: StoredValue = stored.contains(row.key) ? .text(Self.long + "\(row.key)") : .text("new")
            #expect(row.values[Self.t] == expected, "row \(row.key)")
            #expect(row.version == (stored.contains(row.key) ? 2 : 1), "row \(row.key)")
        }
        #expect(try Self.rows(engine, .compare(column: Self.t, .equal, .text("s"))).isEmpty, "old index entries gone")
        #expect(try Self.rows(engine, .compare(column: Self.t, .equal, .text("new"))).map(\.key) == Array(fresh))
        let probe = stored.lowerBound + 2_345
        #expect(
            try Self.rows(engine, .compare(column: Self.t, .equal, .text(Self.long + "\(probe)"))).map(\.key)
                == [probe])

        // An update of every row: a real that keeps its size and a text that grows again.
        var update = ChangeSet()
        update.setWrites = [
            SetWrite(
                entity: LMDBFixture.sample, selection: .matching(nil),
                action: .update([
                    SetWrite.ColumnAssignment(column: Self.r, .add(.real(1.5))),
                    SetWrite.ColumnAssignment(column: Self.t, .value(.text(Self.long + Self.long))),
                ]))
        ]
        try engine.commit(update)
        let afterUpdate = try Self.rows(engine)
        #expect(afterUpdate.count == 6_000)
        #expect(
            afterUpdate.allSatisfy {
                $0.values[Self.r] == .real(1.5) && $0.values[Self.t] == .text(Self.long + Self.long)
            })
        #expect(afterUpdate.allSatisfy { $0.version == (stored.contains($0.key) ? 3 : 2) })
        #expect(try Self.rows(engine, .compare(column: Self.r, .greaterThan, .real(1))).count == 6_000)
        #expect(try Self.rows(engine, .compare(column: Self.code, .equal, .text("N\(fresh.lowerBound)"))).count == 1)
    }
}
