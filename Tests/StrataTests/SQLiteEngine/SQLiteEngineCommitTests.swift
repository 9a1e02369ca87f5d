import Foundation
import Strata
import StrataSQLite
import StrataStorage
import Testing

/// What only SQLite shows of a commit. The engine contract's commit (versions, conflicts,
/// uniqueness, row shapes, serial commits, snapshots) is the kit's "Engine commits" group, which
/// every engine runs (`EngineCommitChecks`).
@Suite("SQLiteEngine commits keep SQLite's own errors")
struct SQLiteEngineCommitTests {
    @Test func aUniqueViolationKeepsSQLitesCodeAndStatement() throws {
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
}
