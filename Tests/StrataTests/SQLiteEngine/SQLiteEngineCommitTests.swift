import Foundation
import Strata
import StrataSQLite
import StrataStorage
import Testing

@Suite("SQLiteEngine commits are atomic and version-checked")
struct SQLiteEngineCommitTests {
    @Test func versionConflictsAreAllReportedAndNothingIsWritten() throws {
        let store = try TemporarySQLiteStore()
        let engine = try store.open()
        defer { engine.close() }
        try engine.commit(
            Fixtures.inserts([Fixtures.account(1, "A"), Fixtures.account(2, "B"), Fixtures.account(3, "C")]))
        var bump = ChangeSet()
        bump.touches = [RowVersionCheck(entity: Fixtures.account, key: 2, expectedVersion: 1)]
        try engine.commit(bump)

        var changes = ChangeSet()
        changes.updates = [
            Fixtures.account(1, "A2", balance: 9, version: 1), // fine
            Fixtures.account(2, "B2", version: 1), // stale: stored 2
        ]
        changes.deletes = [RowVersionCheck(entity: Fixtures.account, key: 77, expectedVersion: 1)] // missing
        changes.touches = [RowVersionCheck(entity: Fixtures.account, key: 3, expectedVersion: 5)] // stale: stored 1
        changes.inserts = [Fixtures.account(3, "dup"), Fixtures.account(4, "D")] // 3 exists
        changes.links = [JoinLink(join: 0, leftKey: 1, rightKey: 1)]

        let error = strataError { try engine.commit(changes) }
        guard case .conflict(let conflicts) = error else {
            Issue.record("expected a conflict, got \(String(describing: error))")
            return
        }
        let found = Set(
            conflicts.map {
                let stored = $0.storedVersion.map(String.init) ?? "nil"
                return "\($0.objectID.entityName)/\($0.objectID.primaryKey ?? 0):\($0.expectedVersion)->\(stored)"
            })
        #expect(found == ["Account/77:1->nil", "Account/2:1->2", "Account/3:5->1", "Account/3:0->1"])
        #expect(conflicts.allSatisfy { $0.objectID.storeIdentifier == engine.storeIdentifier })

        let rows = try allRows(engine, Fixtures.account)
        #expect(rows.map(\.key) == [1, 2, 3])
        #expect(rows.map(\.version) == [1, 2, 1])
        #expect(rows[0].values[0] == .text("A"))
        let reader = try engine.makeReader()
        defer { reader.close() }
        #expect(try reader.linkedKeys(join: 0, from: .left, key: 1) == [])
    }

    @Test func uniqueViolationsWriteNothing() throws {
        let store = try TemporarySQLiteStore()
        let engine = try store.open()
        defer { engine.close() }
        try engine.commit(Fixtures.inserts([Fixtures.account(1, "Checking")]))

        var changes = Fixtures.inserts([Fixtures.account(2, "Savings"), Fixtures.account(3, "Checking")])
        changes.updates = [Fixtures.account(1, "Checking", balance: 100, version: 1)]
        let error = strataError { try engine.commit(changes) }
        #expect(error?.withoutNative == .constraintViolation(entity: "Account", attributes: ["name"]))
        // The cause is SQLITE_CONSTRAINT_UNIQUE on the insert.
        #expect(
            error?.native?.code == 2067 && error?.native?.sql?.hasPrefix("INSERT INTO \"Account\"") == true,
            "\(String(describing: error))")

        // Within one change set, too.
        let twice = Fixtures.inserts([Fixtures.account(5, "Same"), Fixtures.account(6, "Same")])
        #expect(
            strataError { try engine.commit(twice) }?.withoutNative
                == .constraintViolation(entity: "Account", attributes: ["name"]))

        let rows = try allRows(engine, Fixtures.account)
        #expect(rows.count == 1)
        #expect(rows.first?.values[1] == .integer(0))
        #expect(rows.first?.version == 1)
    }

    @Test func deletingThenReinsertingAUniqueValueInOneCommitWorks() throws {
        let store = try TemporarySQLiteStore()
        let engine = try store.open()
        defer { engine.close() }
        try engine.commit(Fixtures.inserts([Fixtures.account(1, "Checking")]))
        var changes = Fixtures.inserts([Fixtures.account(2, "Checking")])
        changes.deletes = [RowVersionCheck(entity: Fixtures.account, key: 1, expectedVersion: 1)]
        try engine.commit(changes)
        #expect(try allRows(engine, Fixtures.account).map(\.key) == [2])
    }

    @Test func valuesOfTheWrongShapeAreRejected() throws {
        let store = try TemporarySQLiteStore()
        let engine = try store.open()
        defer { engine.close() }
        let wrongClass = RowWrite(
            entity: Fixtures.account, key: 1, expectedVersion: 0,
            values: [.integer(1), .integer(0), .null, .integer(1)])
        guard case .misuse = strataError({ try engine.commit(Fixtures.inserts([wrongClass])) }) else {
            Issue.record("a text column accepted an integer")
            return
        }
        let tooFew = RowWrite(entity: Fixtures.account, key: 1, expectedVersion: 0, values: [.text("x")])
        guard case .misuse = strataError({ try engine.commit(Fixtures.inserts([tooFew])) }) else {
            Issue.record("a row with missing values was accepted")
            return
        }
        guard
            case .misuse = strataError({
                try engine.commit(Fixtures.inserts([RowWrite(entity: 9, key: 1, expectedVersion: 0, values: [])]))
            })
        else {
            Issue.record("an unknown entity was accepted")
            return
        }
        #expect(try allRows(engine, Fixtures.account).isEmpty)
    }

    @Test func concurrentCommitsAreSerialised() async throws {
        let store = try TemporarySQLiteStore()
        let engine = try store.open()
        defer { engine.close() }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    for step in 0..<20 {
                        let keys = try engine.allocateKeys(entity: Fixtures.txn, count: 3)
                        let rows = keys.map { Fixtures.txn($0, amount: Int64(worker * 100 + step), account: nil) }
                        try engine.commit(Fixtures.inserts(rows))
                    }
                }
            }
            try await group.waitForAll()
        }
        let rows = try allRows(engine, Fixtures.txn)
        #expect(rows.count == 8 * 20 * 3)
        #expect(Set(rows.map(\.key)).count == rows.count)
    }
}
