import CSQLite
import Foundation
import Strata
import Testing

@testable import StrataSQLite

/// SQLite result codes become the right ``StrataError``: only `SQLITE_CORRUPT` is damage, and
/// every code Strata does not classify keeps its extended code, message and statement.
@Suite("SQLiteEngine error mapping")
struct SQLiteEngineErrorTests {
    /// Codes Strata does not classify, primary and extended.
    static let unclassified: [Int32] = [
        SQLITE_ERROR, SQLITE_INTERNAL, SQLITE_ABORT, SQLITE_INTERRUPT, SQLITE_PROTOCOL, SQLITE_EMPTY, SQLITE_SCHEMA,
        SQLITE_NOTFOUND, SQLITE_TOOBIG, SQLITE_MISMATCH, SQLITE_NOLFS, SQLITE_AUTH, SQLITE_FORMAT, SQLITE_RANGE,
        SQLITE_NOTICE, SQLITE_WARNING,
        SQLITE_ERROR | (2 << 8), // SQLITE_ERROR_RETRY
        SQLITE_ABORT | (2 << 8), // SQLITE_ABORT_ROLLBACK
    ]

    @Test("an unclassified code is engineFailure with the native code, message and SQL", arguments: unclassified)
    func unclassifiedCode(_ rc: Int32) {
        let sql = "SELECT \"name\" FROM \"Account\" WHERE \"id\" = ?"
        let error = strataError(for: SQLiteResultCode(rc), message: "native message", path: "/tmp/s.sqlite", sql: sql)
        guard case .engineFailure(let native) = error else {
            Issue.record("code \(rc) became \(error)")
            return
        }
        #expect(native == NativeError(engine: "sqlite", code: Int(rc), message: "native message", sql: sql))
        #expect(error.native == native)
        #expect(error.description.contains("sqlite code \(rc) \"native message\"") && error.description.contains(sql))
    }

    /// A classified code and the case it must become.
    struct Classified: Sendable, CustomStringConvertible {
        let rc: Int32
        let expected: String
        var description: String { "\(rc) → \(expected)" }
    }

    static let classified: [Classified] = [
        Classified(rc: SQLITE_CORRUPT, expected: "storeCorrupt"),
        Classified(rc: SQLITE_CORRUPT | (1 << 8), expected: "storeCorrupt"), // SQLITE_CORRUPT_VTAB
        Classified(rc: SQLITE_CORRUPT | (3 << 8), expected: "storeCorrupt"), // SQLITE_CORRUPT_INDEX
        Classified(rc: SQLITE_BUSY, expected: "busy"),
        Classified(rc: SQLITE_BUSY | (2 << 8), expected: "busy"), // SQLITE_BUSY_SNAPSHOT
        Classified(rc: SQLITE_LOCKED, expected: "busy"),
        Classified(rc: SQLITE_FULL, expected: "storeFull"),
        Classified(rc: SQLITE_NOTADB, expected: "notAStore"),
        Classified(rc: SQLITE_IOERR, expected: "io"),
        Classified(rc: SQLITE_IOERR | (4 << 8), expected: "io"), // SQLITE_IOERR_FSYNC
        Classified(rc: SQLITE_CANTOPEN, expected: "io"),
        Classified(rc: SQLITE_READONLY, expected: "io"),
        Classified(rc: SQLITE_PERM, expected: "io"),
        Classified(rc: SQLITE_NOMEM, expected: "io"),
        Classified(rc: SQLITE_CONSTRAINT | (8 << 8), expected: "constraintViolation"),
        Classified(rc: SQLITE_CONSTRAINT | (5 << 8), expected: "misuse"), // SQLITE_CONSTRAINT_NOTNULL
        Classified(rc: SQLITE_MISUSE, expected: "misuse"),
    ]

    @Test("a classified code becomes its case", arguments: classified)
    func classifiedCode(_ entry: Classified) {
        let error = strataError(
            for: SQLiteResultCode(entry.rc), message: "UNIQUE constraint failed: Account.name", path: "/tmp/s.sqlite",
            sql: "SELECT 1")
        let name = Mirror(reflecting: error).children.first?.label ?? "\(error)"
        #expect(name == entry.expected, "code \(entry.rc) became \(error)")
    }

    @Test("no code but SQLITE_CORRUPT is reported as damage", arguments: Array(Int32(0)...Int32(28)))
    func onlyCorruptIsDamage(_ rc: Int32) {
        let error = strataError(for: SQLiteResultCode(rc), message: "m", path: "/p", sql: nil)
        if case .storeCorrupt = error {
            #expect(rc == SQLITE_CORRUPT)
        }
    }

    @Test func aTooBigValueIsAnEngineFailureNotDamage() throws {
        let store = try TemporarySQLiteStore()
        let opened = try store.open()
        defer { opened.close() }
        let engine = try #require(opened as? SQLiteEngine)
        try engine.commit(Fixtures.inserts([Fixtures.account(1, "Short")]))
        try engine.withWriter { connection in _ = sqlite3_limit(connection.db, SQLITE_LIMIT_LENGTH, 100) }
        let error = strataError {
            try engine.commit(Fixtures.inserts([Fixtures.account(2, String(repeating: "x", count: 1000))]))
        }
        guard case .engineFailure(let native) = error else {
            Issue.record("a value over SQLITE_LIMIT_LENGTH gave \(String(describing: error))")
            return
        }
        #expect(native.engine == "sqlite")
        #expect(native.code & 0xFF == Int(SQLITE_TOOBIG))
        #expect(native.sql?.hasPrefix("INSERT INTO \"Account\"") == true)
        // Nothing was written, and the store still works.
        #expect(try allRows(engine, Fixtures.account).count == 1)
        try engine.commit(Fixtures.inserts([Fixtures.account(3, "Third")]))
        #expect(try allRows(engine, Fixtures.account).count == 2)
    }
}
