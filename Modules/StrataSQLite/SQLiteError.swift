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
        case SQLITE_CONSTRAINT: rawValue == Self.constraintUnique ? .uniqueConstraint
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

/// Classifies a failed result code as a ``StrataError``.
///
/// Only `SQLITE_CORRUPT` means damage (`.storeCorrupt`); `SQLITE_NOTADB` means the file is not
/// a database (`.notAStore`). Every code Strata does not classify (`SQLITE_ERROR`,
/// `SQLITE_TOOBIG`, `SQLITE_RANGE`, `SQLITE_SCHEMA`, …) becomes
/// `.engineFailure(engine: "sqlite", code:, message:)` with the extended code, SQLite's message
/// and the statement.
func strataError(for code: SQLiteResultCode, message: String, path: String, sql: String? = nil) -> StrataError {
    switch code.kind {
    case .ok, .row, .done:
        return .misuse("SQLite reported success as a failure: \(message)")
    case .busy, .locked:
        return .busy("\(path): \(message): another connection (in this or another process) held the store's lock for longer than the busy timeout (SQLiteOptions.busyTimeout)")
    case .full:
        return .storeFull(message)
    case .corrupt:
        return .storeCorrupt(message)
    case .notADatabase:
        return .notAStore(path: path, reason: "not a SQLite database (\(message))")
    case .ioError:
        // A write refused for lack of room is a full store, however SQLite words it. Only a
        // write can be refused for room: a failed read, lock or `fstat` stays `.io`.
        let directory = (path as NSString).deletingLastPathComponent
        if code.isWriteSideIOError, let exhausted = StoreRoom.exhaustion(files: [path, path + "-wal", path + "-journal"], directory: directory) {
            return .storeFull("\(path): \(message): \(exhausted). Nothing was written")
        }
        return .io("\(path): \(message)")
    case .cantOpen, .readOnly, .permission, .noMemory:
        return .io("\(path): \(message)")
    case .uniqueConstraint, .primaryKeyConstraint:
        let (table, columns) = parseUniqueFailure(message)
        return .constraintViolation(entity: table, attributes: columns)
    case .constraint, .misuse:
        return .misuse("SQLite rejected a statement: \(message)")
    case .other:
        let statement = sql.map { " while running \(excerpt(of: $0))" } ?? ""
        return .engineFailure(engine: "sqlite", code: Int(code.rawValue), message: "\(message) on \(path)\(statement)")
    }
}

/// The SQL text for an error message, shortened past 300 characters (a statement with
/// thousands of parameters would otherwise fill the log).
func excerpt(of sql: String) -> String {
    let limit = 300
    guard sql.count > limit else { return sql }
    return "\(sql.prefix(limit))… (\(sql.count) characters)"
}

/// Parses `"UNIQUE constraint failed: Account.name, Account.kind"` into
/// `("Account", ["name", "kind"])`.
func parseUniqueFailure(_ message: String) -> (table: String, columns: [String]) {
    let marker = "constraint failed: "
    guard let range = message.range(of: marker) else { return ("?", []) }
    var rest = message[range.upperBound...]
    if let bracket = rest.firstIndex(of: "[") { rest = rest[..<bracket] }
    var table = "?"
    var columns: [String] = []
    for part in rest.split(separator: ",") {
        let item = part.trimmingCharacters(in: .whitespaces)
        if let dot = item.lastIndex(of: ".") {
            table = String(item[..<dot])
            columns.append(String(item[item.index(after: dot)...]))
        } else if !item.isEmpty {
            columns.append(item)
        }
    }
    return (table, columns)
}
