import CSQLite
import Foundation
import StrataStorage

/// A SQLite result code, classified: one case per code Strata treats specially, plus `other`.
///
/// Extended result codes are kept in ``rawValue``; the cases classify by the primary code.
struct SQLiteResultCode: Sendable, Hashable, CustomStringConvertible {
    /// The (possibly extended) result code as SQLite returned it.
    let rawValue: Int32

    init(_ rawValue: Int32) { self.rawValue = rawValue }

    /// `SQLITE_CONSTRAINT_UNIQUE` and `SQLITE_CONSTRAINT_PRIMARYKEY` (macros Swift cannot import).
    static let constraintUnique = SQLITE_CONSTRAINT | (8 << 8)
    static let constraintPrimaryKey = SQLITE_CONSTRAINT | (6 << 8)

    /// The extended I/O error codes of a write that may have been refused for lack of room:
    /// `SQLITE_IOERR_WRITE`, `_FSYNC`, `_DIR_FSYNC`, `_TRUNCATE`, `_SHMSIZE` and `_COMMIT_ATOMIC`
    /// (macros Swift cannot import). Reads, locks, `fstat`, `mmap` and the rest are not.
    static let writeSideIOErrors: Set<Int32> = [
        SQLITE_IOERR | (3 << 8), SQLITE_IOERR | (4 << 8), SQLITE_IOERR | (5 << 8),
        SQLITE_IOERR | (6 << 8), SQLITE_IOERR | (19 << 8), SQLITE_IOERR | (30 << 8),
    ]

    /// Whether this is an I/O error of a write (see ``writeSideIOErrors``).
    var isWriteSideIOError: Bool { Self.writeSideIOErrors.contains(rawValue) }

    /// The primary result code (the low 8 bits).
    var primary: Int32 { rawValue & 0xFF }

    /// The code's classification.
    var kind: Kind {
        switch primary {
        case SQLITE_OK: .ok
        case SQLITE_ROW: .row
        case SQLITE_DONE: .done
        case SQLITE_BUSY: .busy
        case SQLITE_LOCKED: .locked
        case SQLITE_FULL: .full
        case SQLITE_CORRUPT: .corrupt
        case SQLITE_NOTADB: .notADatabase
        case SQLITE_IOERR: .ioError
        case SQLITE_CANTOPEN: .cantOpen
        case SQLITE_READONLY: .readOnly
        case SQLITE_PERM: .permission
        case SQLITE_CONSTRAINT:
            rawValue == Self.constraintUnique
                ? .uniqueConstraint
                : (rawValue == Self.constraintPrimaryKey ? .primaryKeyConstraint : .constraint)
        case SQLITE_MISUSE: .misuse
        case SQLITE_NOMEM: .noMemory
        default: .other
        }
    }

    enum Kind: Sendable, Hashable {
        case ok, row, done, busy, locked, full, corrupt, notADatabase, ioError, cantOpen, readOnly
        case permission, uniqueConstraint, primaryKeyConstraint, constraint, misuse, noMemory, other
    }

    /// SQLite's English name of the code, e.g. `"database is locked (5)"`.
    var description: String {
        guard let text = sqliteCodeText(rawValue) else { return "SQLite result code \(rawValue)" }
        return "\(text) (\(rawValue))"
    }
}

/// Classifies a failed result code as a ``StrataError`` carrying the native error: engine
/// `"sqlite"`, the extended result code, SQLite's message and the statement.
///
/// Only `SQLITE_CORRUPT` means damage (`.storeCorrupt`); `SQLITE_NOTADB` means the file is not
/// a database (`.notAStore`). A unique or primary-key violation becomes a `.constraintViolation`
/// with no entity and no attributes: SQLite's message text is never parsed, and the commit, which
/// knows the row and the schema, names them (see `CommitWriter`). Every code Strata does not
/// classify (`SQLITE_ERROR`, `SQLITE_TOOBIG`, `SQLITE_RANGE`, `SQLITE_SCHEMA`, …) becomes
/// `.engineFailure` with the native error.
func strataError(for code: SQLiteResultCode, message: String, path: String, sql: String? = nil) -> StrataError {
    let native = NativeError(engine: "sqlite", code: Int(code.rawValue), message: message, sql: sql)
    switch code.kind {
    case .ok, .row, .done:
        return .misuse("SQLite reported success as a failure", native: native)
    case .busy, .locked:
        return .busy(
            """
            \(path): another connection (in this or another process) held the store's lock for longer than the \
            busy timeout (SQLiteOptions.busyTimeout)
            """,
            native: native)
    case .full:
        return .storeFull("\(path): SQLite could not grow the store", native: native)
    case .corrupt:
        return .storeCorrupt("\(path): SQLite found damaged pages", native: native)
    case .notADatabase:
        return .notAStore(path: path, reason: "not a SQLite database", native: native)
    case .ioError:
        // A write refused for lack of room is a full store, however SQLite words it. Only a
        // write can be refused for room: a failed read, lock or `fstat` stays `.io`.
        let directory = (path as NSString).deletingLastPathComponent
        if code.isWriteSideIOError,
            let exhausted = StoreRoom.exhaustion(files: [path, path + "-wal", path + "-journal"], directory: directory)
        {
            return .storeFull("\(path): \(exhausted). Nothing was written", native: native)
        }
        return .io("\(path): the operating system failed a read or write", native: native)
    case .cantOpen, .readOnly, .permission:
        // SQLite names the store even when its -wal or -shm (perhaps another user's) is what failed.
        let files = [(path, "file"), (path + "-wal", "write-ahead log"), (path + "-shm", "shared-memory index")]
        if let detail = StoreFileAccess.firstUnwritable(files) { return .io(detail, native: native) }
        if code.kind == .cantOpen { return .io("\(path): the file cannot be opened", native: native) }
        return .io("\(path): the file or its directory cannot be written", native: native)
    case .noMemory:
        return .io("\(path): out of memory", native: native)
    case .uniqueConstraint, .primaryKeyConstraint:
        return .constraintViolation(entity: "", attributes: [], native: native)
    case .constraint, .misuse:
        return .misuse("SQLite rejected a statement", native: native)
    case .other:
        return .engineFailure(native)
    }
}
