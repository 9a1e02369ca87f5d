import Foundation
import Strata
import StrataStorage
import Testing

@Suite("LMDB commits: versions, uniqueness, snapshots")
struct LMDBWriteTests {
    static func seeded() throws -> any StorageEngine {
        let engine = try LMDBFixture.open(LMDBFixture.directory())
        var changes = ChangeSet()
        changes.inserts = [
            RowWrite(entity: 0, key: 1, expectedVersion: 0, values: [.text("Checking"), .integer(100), .null]),
            RowWrite(entity: 0, key: 2, expectedVersion: 0, values: [.text("Savings"), .integer(5), .text("memo")]),
        ]
        try engine.commit(changes)
        return engine
    }

    @Test("updates and touches bump versions")
    func versions() throws {
        let engine = try Self.seeded()
        defer { engine.close() }
        var changes = ChangeSet()
        changes.updates = [
            RowWrite(entity: 0, key: 1, expectedVersion: 1, values: [.text("Checking 2"), .integer(50), .text("x")])
        ]
        changes.touches = [RowVersionCheck(entity: 0, key: 2, expectedVersion: 1)]
        try engine.commit(changes)
        let rows = try LMDBFixture.allRows(engine, 0)
        #expect(rows.map(\.version) == [2, 2])
        #expect(rows[0].values == [.text("Checking 2"), .integer(50), .text("x")])
        #expect(rows[1].values == [.text("Savings"), .integer(5), .text("memo")])
        let reader = try engine.makeReader()
        defer { reader.close() }
        #expect(
            try reader.rows(for: FetchPlan(entity: 0, filter: .compare(column: 0, .equal, .text("Checking")))).isEmpty)
        #expect(
            try reader.rows(for: FetchPlan(entity: 0, filter: .compare(column: 0, .equal, .text("Checking 2")))).map(
                \.key) == [1])
    }

    @Test("every version mismatch is reported and nothing is written")
    func conflicts() throws {
        let engine = try Self.seeded()
        defer { engine.close() }
        let before = try LMDBFixture.allRows(engine, 0)
        var changes = ChangeSet()
        changes.updates = [RowWrite(entity: 0, key: 1, expectedVersion: 7, values: [.text("X"), .integer(1), .null])]
        changes.deletes = [RowVersionCheck(entity: 0, key: 42, expectedVersion: 1)]
        changes.touches = [RowVersionCheck(entity: 0, key: 2, expectedVersion: 1)]
        changes.inserts = [
            RowWrite(entity: 0, key: 2, expectedVersion: 0, values: [.text("Dup"), .integer(1), .null]),
            RowWrite(entity: 0, key: 3, expectedVersion: 0, values: [.text("New"), .integer(1), .null]),
        ]
        let error = LMDBFixture.strataError { try engine.commit(changes) }
        guard case .conflict(let conflicts) = error else {
            Issue.record("expected .conflict, got \(String(describing: error))")
            return
        }
        let id = engine.storeIdentifier
        #expect(
            Set(conflicts) == [
                VersionConflict(
                    objectID: ObjectID(storeIdentifier: id, entityName: "Account", primaryKey: 1), expectedVersion: 7,
                    storedVersion: 1),
                VersionConflict(
                    objectID: ObjectID(storeIdentifier: id, entityName: "Account", primaryKey: 42), expectedVersion: 1,
                    storedVersion: nil),
                VersionConflict(
                    objectID: ObjectID(storeIdentifier: id, entityName: "Account", primaryKey: 2), expectedVersion: 0,
                    storedVersion: nil),
            ])
        #expect(try LMDBFixture.allRows(engine, 0) == before)
    }

    @Test("a unique violation writes nothing; nulls never conflict")
    func uniqueness() throws {
        let engine = try Self.seeded()
        defer { engine.close() }
        let before = try LMDBFixture.allRows(engine, 0)
        var changes = ChangeSet()
        changes.inserts = [
            RowWrite(entity: 0, key: 3, expectedVersion: 0, values: [.text("Fresh"), .integer(1), .null]),
            RowWrite(entity: 0, key: 4, expectedVersion: 0, values: [.text("Savings"), .integer(1), .null]),
        ]
        let error = LMDBFixture.strataError { try engine.commit(changes) }
        #expect(error?.withoutNative == .constraintViolation(entity: "Account", attributes: ["name"]))
        // The cause is MDB_KEYEXIST from putting the unique index entry.
        #expect(
            error?.native
                == NativeError(
                    engine: "lmdb", code: -30799, message: "MDB_KEYEXIST: Key/data pair already exists",
                    operation: "mdb_put"))
        #expect(try LMDBFixture.allRows(engine, 0) == before)
        var rename = ChangeSet()
        rename.updates = [
            RowWrite(entity: 0, key: 1, expectedVersion: 1, values: [.text("Savings"), .integer(1), .null])
        ]
        #expect(
            LMDBFixture.strataError { try engine.commit(rename) }?.withoutNative
                == .constraintViolation(entity: "Account", attributes: ["name"]))
        // Swapping names inside one change set is fine once the old rows are gone.
        var swap = ChangeSet()
        swap.deletes = [RowVersionCheck(entity: 0, key: 2, expectedVersion: 1)]
        swap.updates = [
            RowWrite(entity: 0, key: 1, expectedVersion: 1, values: [.text("Savings"), .integer(1), .null])
        ]
        try engine.commit(swap)
        // Null codes in a unique index do not conflict.
        var nulls = ChangeSet()
        for key in Int64(1)...3 {
            nulls.inserts.append(
                RowWrite(entity: 2, key: key, expectedVersion: 0, values: [.null, .null, .null, .null, .null]))
        }
        try engine.commit(nulls)
        #expect(try LMDBFixture.allRows(engine, 2).count == 3)
    }

    @Test("an index key longer than LMDB allows is a typed error, never truncated")
    func keySize() throws {
        let engine = try Self.seeded()
        defer { engine.close() }
        let long = String(repeating: "ü", count: 400)
        let error = LMDBFixture.strataError { try LMDBFixture.insert(engine, 0, 9, [.text(long), .integer(0), .null]) }
        guard case .validation(let issues) = error else {
            Issue.record("expected .validation, got \(String(describing: error))")
            return
        }
        #expect(issues.first?.property == "name")
        #expect(try LMDBFixture.allRows(engine, 0).count == 2)
        // An unindexed column takes long values.
        try LMDBFixture.insert(engine, 0, 9, [.text("short"), .integer(0), .text(long)])
    }

    @Test("a reader's snapshot does not move while other commits land")
    func snapshot() throws {
        let engine = try Self.seeded()
        defer { engine.close() }
        let reader = try engine.makeReader()
        defer { reader.close() }
        let before = try reader.rows(for: FetchPlan(entity: 0))
        var changes = ChangeSet()
        changes.updates = [
            RowWrite(entity: 0, key: 1, expectedVersion: 1, values: [.text("Changed"), .integer(0), .null])
        ]
        changes.inserts = [
            RowWrite(entity: 0, key: 3, expectedVersion: 0, values: [.text("Third"), .integer(3), .null])
        ]
        try engine.commit(changes)
        #expect(try reader.rows(for: FetchPlan(entity: 0)) == before)
        #expect(try reader.count(entity: 0, filter: nil) == 2)
        #expect(try reader.row(entity: 0, key: 3) == nil)
        #expect(try LMDBFixture.allRows(engine, 0).count == 3)
    }
}
