import Foundation
import Strata
import StrataStorage
import Testing

/// What only LMDB shows of a commit: its own error for a unique clash, and its key-size limit.
/// The engine contract's commit is the kit's "Engine commits" group (`EngineCommitChecks`).
@Suite("LMDB commits: LMDB's own errors and limits")
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

    @Test("a unique violation keeps MDB_KEYEXIST and writes nothing")
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
}
