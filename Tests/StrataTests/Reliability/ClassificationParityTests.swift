import CLMDB
import CSQLite
import Foundation
import Strata
import Testing

@testable import StrataLMDB
@testable import StrataSQLite

/// SQLite and LMDB put the same situation into the same `StrataError` case, each keeping its own
/// native code: a caller matches on the case and never needs to know the engine.
/// PostgreSQL's SQLSTATEs map to the same cases (`PostgresCodecTests`).
@Suite("classification parity")
struct ClassificationParityTests {
    /// One situation, with SQLite's and LMDB's codes for it, and the case both must give.
    struct Situation: Sendable, CustomStringConvertible {
        let name: String
        let sqlite: Int32
        let lmdb: Int32
        let expected: String
        var description: String { name }
    }

    static let situations: [Situation] = [
        Situation(name: "a lock held too long", sqlite: SQLITE_BUSY, lmdb: EBUSY, expected: "busy"),
        Situation(
            name: "a lock held by a reader or snapshot", sqlite: SQLITE_BUSY | (2 << 8), lmdb: MDB_READERS_FULL,
            expected: "busy"),
        Situation(name: "no room left", sqlite: SQLITE_FULL, lmdb: MDB_MAP_FULL, expected: "storeFull"),
        Situation(name: "damaged pages", sqlite: SQLITE_CORRUPT, lmdb: MDB_CORRUPTED, expected: "storeCorrupt"),
        Situation(name: "not a store of this engine", sqlite: SQLITE_NOTADB, lmdb: MDB_INVALID, expected: "notAStore"),
        Situation(name: "an OS read or write failed", sqlite: SQLITE_IOERR, lmdb: EIO, expected: "io"),
        Situation(name: "no permission", sqlite: SQLITE_PERM, lmdb: EACCES, expected: "io"),
        Situation(name: "a read-only store", sqlite: SQLITE_READONLY, lmdb: EROFS, expected: "io"),
        Situation(name: "out of memory", sqlite: SQLITE_NOMEM, lmdb: ENOMEM, expected: "io"),
        Situation(name: "a value too big", sqlite: SQLITE_TOOBIG, lmdb: MDB_BAD_VALSIZE, expected: "engineFailure"),
        Situation(name: "an unknown code", sqlite: 12_345, lmdb: 12_345, expected: "engineFailure"),
    ]

    /// The case name of an error.
    static func caseName(_ error: StrataError) -> String {
        Mirror(reflecting: error).children.first?.label ?? "\(error)"
    }

    @Test("both engines classify a situation into the same case, each with its native code", arguments: situations)
    func sameCase(_ situation: Situation) {
        let fromSQLite = strataError(for: SQLiteResultCode(situation.sqlite), message: "m", path: "/tmp/store.sqlite")
        let fromLMDB = LMDBError(code: situation.lmdb).strataError("/tmp/store.lmdb")
        #expect(Self.caseName(fromSQLite) == situation.expected, "SQLite \(situation.sqlite) gave \(fromSQLite)")
        #expect(Self.caseName(fromLMDB) == situation.expected, "LMDB \(situation.lmdb) gave \(fromLMDB)")
        #expect(
            fromSQLite.native?.engine == "sqlite" && fromSQLite.native?.code == Int(situation.sqlite), "\(fromSQLite)")
        #expect(fromLMDB.native?.engine == "lmdb" && fromLMDB.native?.code == Int(situation.lmdb), "\(fromLMDB)")
    }
}
