/// What an engine's own library said when it failed: the cause kept under a ``StrataError``.
///
/// ``StrataError`` is the engine-neutral classification callers match on (`.busy`, `.storeFull`,
/// `.constraintViolation`, …). When an engine failure produced it, the error also carries the
/// engine's native error, reachable as ``StrataError/native``: the engine's name, its own result
/// code (SQLite's extended result code, LMDB's return code or an `errno`), its message, and the SQL
/// statement or the operation that failed. Use it to log and to report; match on the
/// classification, which is the same for every engine.
///
/// ```swift
/// do {
///     try await context.perform { try context.save() }
/// } catch StrataError.busy {
///     // Retry later; the native error says which lock and which statement.
/// } catch let error as StrataError {
///     if let native = error.native { print(native.engine, native.code, native.message) }
/// }
/// ```
///
/// A value: keep it, log it, compare it; it holds no handle to the store.
public struct NativeError: Sendable, Hashable, CustomStringConvertible {
    /// The engine's name, e.g. `"sqlite"` or `"lmdb"`.
    public var engine: String
    /// The native code: SQLite's extended result code (`2067` for `SQLITE_CONSTRAINT_UNIQUE`),
    /// LMDB's return code (`-30792` for `MDB_MAP_FULL`) or an `errno` (`28` for `ENOSPC`).
    public var code: Int
    /// The native message, as the engine's library worded it (`sqlite3_errmsg`, `mdb_strerror`).
    public var message: String
    /// The SQL statement that failed, for an SQL engine; nil otherwise or when unknown.
    public var sql: String?
    /// The operation that failed, e.g. `"mdb_txn_commit"`, `"fsync"` or `"committing"`; nil when
    /// the SQL statement says it all or it is unknown.
    public var operation: String?
    /// The SQLSTATE of an SQL server's error (PostgreSQL's five characters, e.g. `"23505"`), nil
    /// for engines without one or failures the server did not classify (a lost connection).
    public var sqlState: String?

    /// Describes one native failure.
    /// - Parameters:
    ///   - engine: the engine's name (``StorageEngine`` implementations use one fixed name).
    ///   - code: the native result code or `errno`.
    ///   - message: the native message.
    ///   - sql: the SQL statement that failed, if any.
    ///   - operation: the operation that failed, if any.
    ///   - sqlState: the server's SQLSTATE, if any.
    public init(
        engine: String, code: Int, message: String, sql: String? = nil, operation: String? = nil,
        sqlState: String? = nil
    ) {
        self.engine = engine
        self.code = code
        self.message = message
        self.sql = sql
        self.operation = operation
        self.sqlState = sqlState
    }

    /// For example `sqlite code 2067 "UNIQUE constraint failed: Account.name" in INSERT INTO …`, or with a
    /// SQLSTATE `postgres code 83906754 (SQLSTATE 23505): duplicate key value violates … in INSERT INTO …`.
    /// SQL past 300 characters is shortened.
    public var description: String {
        var text = "\(engine) code \(code)"
        // A server's message quotes names itself ("… constraint "Seat_row_unique""): kept verbatim.
        if let sqlState {
            text += " (SQLSTATE \(sqlState)): \(message);"
        } else {
            text += " \(Self.quoted(message))"
        }
        if let operation { text += " during \(operation)" }
        if let sql { text += " in \(Self.excerpt(sql))" }
        return text
    }

    /// `message` in double quotes, as `String(reflecting:)` writes it but for apostrophes, which
    /// stay as they are (an engine's message often quotes a value with them: `'Dune'`, not
    /// `\'Dune\'`): `"` and `\` are escaped, and control characters written as escapes.
    static func quoted(_ message: String) -> String {
        var out = "\""
        for scalar in message.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if scalar.value < 0x20 || scalar.value == 0x7F {
                    out += "\\u{\(String(scalar.value, radix: 16))}"
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        return out + "\""
    }

    /// The SQL text for a message, shortened past 300 characters.
    static func excerpt(_ sql: String) -> String {
        let limit = 300
        guard sql.count > limit else { return sql }
        return "\(sql.prefix(limit))… (\(sql.count) characters)"
    }
}
