import CSQLite
import Foundation
import StrataStorage

/// One SQLite connection and its prepared-statement cache.
///
/// `@unchecked Sendable`: a connection is used by one thread at a time. The engine hands it
/// over under a `Mutex` (the writer) or through the reader pool, never sharing it concurrently.
///
/// Walled file (strict memory safety): the `sqlite3` pointer, the C calls on it, and reading
/// SQLite's error codes and messages stay in here and in ``SQLiteStatement``.
@safe final class SQLiteConnection: @unchecked Sendable {
    private(set) var db: OpaquePointer?
    let path: String
    private var cache: [String: SQLiteStatement] = [:]
    /// Statements with a fixed slot (per entity and kind), found without hashing SQL. Exempt
    /// from dynamic exclusivity checks: one thread at a time uses a connection, and every key
    /// lookup reads this.
    @exclusivity(unchecked) private var slots: [SQLiteStatement?] = []
    /// Statements of read shapes (see ``SQLiteQueryShape``), keyed by the shape's number, so that
    /// a fault or a batch read binds its values without building or hashing SQL text.
    private var shapes: [Int: SQLiteStatement] = [:]
    /// The number of frames in the write-ahead log after this connection's last commit, stored
    /// by the WAL hook (see ``walFrames``); allocated for the connection's whole life.
    private let walFrameCount = UnsafeMutablePointer<Int32>.allocate(capacity: 1)
    /// The rowids SQLite's update hook collects while ``beginCollectingRowids()`` is in force (a
    /// buffer grown by the hook with `sqlite3_realloc64`, kept for the connection's whole life).
    private let rowids = UnsafeMutablePointer<strata_sqlite_rowids>.allocate(capacity: 1)
    /// Statements beyond this many are prepared uncached (filter shapes can be unbounded).
    private static let cacheLimit = 256

    /// Opens a connection.
    /// - Parameters:
    ///   - readOnly: open with `SQLITE_OPEN_READONLY` (readers); otherwise read-write.
    ///   - create: create the file when missing (only for a store being built under a
    ///     temporary name, see `SQLiteEngine.createStoreFile`); a store's own path is never
    ///     opened with `SQLITE_OPEN_CREATE`, so it never holds a half-made store.
    ///   - busyTimeout: milliseconds to wait for locks before `SQLITE_BUSY`.
    ///   - maximumVariables: lowers `SQLITE_LIMIT_VARIABLE_NUMBER` (tests); nil keeps SQLite's.
    /// - Throws: `.io`, `.notAStore`, `.busy` as SQLite reports.
    init(
        path: String, readOnly: Bool, create: Bool = false, busyTimeout: Int32, maximumVariables: Int32? = nil
    ) throws(StrataError) {
        self.path = path
        var handle: OpaquePointer?
        let access = readOnly ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0))
        let flags = access | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE
        let rc = unsafe sqlite3_open_v2(path, &handle, flags, nil)
        if rc != SQLITE_OK {
            let error = unsafe strataError(
                for: SQLiteResultCode(rc), message: errorMessage(handle, fallback: SQLiteResultCode(rc)), path: path)
            unsafe sqlite3_close_v2(handle)
            unsafe walFrameCount.deallocate() // deinit does not run for an object left half-made
            unsafe rowids.deallocate()
            throw error
        }
        unsafe db = unsafe handle
        unsafe walFrameCount.initialize(to: 0)
        unsafe rowids.initialize(to: strata_sqlite_rowids(rowids: nil, count: 0, capacity: 0, failed: 0))
        // SQLite's automatic checkpoint is replaced: the engine checkpoints only when the disk has
        // room for it (see `SQLiteEngine.checkpointIfDue`).
        unsafe strata_sqlite_track_wal_frames(handle, walFrameCount)
        unsafe sqlite3_extended_result_codes(handle, 1)
        // Every name the engine writes is double-quoted: a missing column must be an error, never
        // its own name read back as a text value.
        unsafe strata_sqlite_disable_double_quoted_strings(handle)
        unsafe sqlite3_busy_timeout(handle, busyTimeout)
        busyTimeoutMilliseconds = busyTimeout
        if let maximumVariables { unsafe sqlite3_limit(handle, SQLITE_LIMIT_VARIABLE_NUMBER, max(maximumVariables, 1)) }
        variableLimit = unsafe Int(sqlite3_limit(handle, SQLITE_LIMIT_VARIABLE_NUMBER, -1))
    }

    /// The most parameters one statement may have on this connection.
    let variableLimit: Int

    /// The busy timeout currently set on the connection, in milliseconds.
    private var busyTimeoutMilliseconds: Int32

    /// Sets how long SQLite's busy handler waits for another connection's lock from now on
    /// (0: not at all); calls `sqlite3_busy_timeout` only when the value changes.
    func setBusyTimeout(milliseconds: Int32) {
        guard milliseconds != busyTimeoutMilliseconds, let db = unsafe db else { return }
        unsafe sqlite3_busy_timeout(db, milliseconds)
        busyTimeoutMilliseconds = milliseconds
    }

    deinit {
        close()
        unsafe walFrameCount.deallocate()
        unsafe sqlite3_free(rowids.pointee.rowids)
        unsafe rowids.deallocate()
    }

    /// The number of frames in the write-ahead log after this connection's last commit (0 before
    /// its first): what SQLite's automatic checkpoint would look at.
    var walFrames: Int { unsafe Int(walFrameCount.pointee) }

    /// Whether closing this connection, when it is the last one to the store, checkpoints the
    /// write-ahead log into the database file (SQLite's default) or leaves it as it is.
    func setCheckpointOnClose(_ enabled: Bool) {
        guard let db = unsafe db else { return }
        unsafe strata_sqlite_set_checkpoint_on_close(db, enabled ? 1 : 0)
    }

    /// The first `count` bytes of the database file (fewer when it is shorter), read through the
    /// descriptor SQLite opened for this connection.
    ///
    /// Never read a store file through a descriptor of one's own while connections are open:
    /// POSIX locks belong to the process and the file, so closing any descriptor of the file
    /// drops every lock this process holds on it, and another process may then take the
    /// exclusive lock and delete the write-ahead log under the open connections.
    /// - Throws: `.io` when SQLite cannot read the file; `.misuse` after ``close()``.
    func fileStart(count: Int) throws(StrataError) -> [UInt8] {
        guard let db = unsafe db else { throw .misuse("the SQLite connection to \(path) is closed") }
        var bytes = [UInt8](repeating: 0, count: count)
        let read = unsafe bytes.withUnsafeMutableBufferPointer { buffer in
            unsafe strata_sqlite_read_file_start(db, buffer.baseAddress, Int32(buffer.count))
        }
        guard read >= 0 else {
            let code = SQLiteResultCode(-read)
            throw strataError(for: code, message: sqliteCodeText(code.rawValue) ?? "\(code)", path: path)
        }
        return Array(bytes[..<Int(read)])
    }

    /// Whether the database file this connection opened is no longer the one at its path: it
    /// was deleted, or another file was moved over it (`SQLITE_FCNTL_HAS_MOVED`: a `stat` of the
    /// path against the open file). In WAL mode SQLite writes on into such a file without an
    /// error, and a commit there is lost.
    func fileHasMoved() -> Bool {
        guard let db = unsafe db else { return false }
        var moved: Int32 = 0
        let rc = unsafe sqlite3_file_control(db, "main", SQLITE_FCNTL_HAS_MOVED, &moved)
        return rc == SQLITE_OK && moved != 0
    }

    // MARK: Written rowids

    /// Starts collecting the rowid of every row this connection inserts, updates or deletes in
    /// a rowid table, in the order SQLite writes them (SQLite's update hook: one C call per row,
    /// cheaper than `RETURNING`, which runs a trigger program per row). SQLite reports no row of a
    /// `DELETE` without `WHERE`. Read them with ``collectedRowidCount`` and
    /// ``collectedRowid(at:)``; end with ``endCollectingRowids()`` before anything else writes.
    func beginCollectingRowids() {
        guard let db = unsafe db else { return }
        unsafe rowids.pointee.count = 0
        unsafe rowids.pointee.failed = 0
        unsafe strata_sqlite_collect_rowids(db, rowids)
    }

    /// How many rowids were collected since ``beginCollectingRowids()``.
    var collectedRowidCount: Int { unsafe Int(rowids.pointee.count) }

    /// The rowid collected at `index` (`0..<collectedRowidCount`).
    func collectedRowid(at index: Int) -> Int64 {
        precondition(index >= 0 && index < collectedRowidCount, "rowid index out of range")
        return unsafe rowids.pointee.rowids[index]
    }

    /// Stops collecting and returns the rowids collected, in write order.
    /// - Throws: `.io` when SQLite could not grow the buffer (out of memory): the rows were written
    ///   but their keys are incomplete, so the caller must roll back.
    func endCollectingRowids() throws(StrataError) -> [Int64] {
        if let db = unsafe db { unsafe strata_sqlite_collect_rowids(db, nil) }
        guard unsafe rowids.pointee.failed == 0 else {
            throw .io("\(path): out of memory while collecting the keys of written rows")
        }
        let count = collectedRowidCount
        guard count > 0, let start = unsafe rowids.pointee.rowids else { return [] }
        return unsafe Array(UnsafeBufferPointer(start: start, count: count))
    }

    /// Whether ``close()`` has run.
    var isClosed: Bool { unsafe db == nil }

    /// Finalizes every cached statement and closes the connection. Idempotent.
    func close() {
        for statement in cache.values { statement.finalize() }
        for statement in unsafe slots { statement?.finalize() }
        for statement in shapes.values { statement.finalize() }
        cache.removeAll()
        unsafe slots.removeAll()
        shapes.removeAll()
        if let db = unsafe db { unsafe sqlite3_close_v2(db) }
        unsafe db = nil
    }

    /// Runs one or more SQL statements that take no parameters (DDL, BEGIN, COMMIT, PRAGMA).
    func execute(_ sql: String) throws(StrataError) {
        guard let db = unsafe db else { throw .misuse("the SQLite connection to \(path) is closed") }
        unsafe try check(sqlite3_exec(db, sql, nil, nil, nil), db: db, path: path, sql: sql)
    }

    /// The cached prepared statement for `sql`, preparing it on first use.
    ///
    /// The caller binds, steps and then calls ``SQLiteStatement/reset()``.
    func statement(_ sql: String) throws(StrataError) -> SQLiteStatement {
        if let cached = cache[sql] { return cached }
        let statement = try prepare(sql)
        if cache.count < Self.cacheLimit { cache[sql] = statement }
        return statement
    }

    /// The prepared statement in `slot`, preparing `sql` on first use. A slot always holds the
    /// same SQL (see ``SQLiteStatementSlot``).
    func statement(_ sql: String, slot: Int) throws(StrataError) -> SQLiteStatement {
        if unsafe slot < slots.count, let statement = unsafe slots[slot] { return statement }
        let statement = try prepare(sql)
        if unsafe slot >= slots.count {
            unsafe slots.append(contentsOf: repeatElement(nil, count: slot + 1 - slots.count))
        }
        unsafe slots[slot] = statement
        return statement
    }

    /// Finalizes every statement held in a slot; later uses prepare them again. A migration's
    /// transaction engine calls it when done: its layouts (another schema version's) filled
    /// slots whose numbers the engine's own layouts reuse for other SQL.
    func forgetSlotStatements() {
        for statement in unsafe slots { statement?.finalize() }
        unsafe slots.removeAll()
        for statement in shapes.values { statement.finalize() }
        shapes.removeAll()
    }

    /// The prepared statement of read shape `shape` (see ``SQLiteQueryShape/key``), preparing
    /// `sql()` on first use. A shape number always stands for the same SQL while the
    /// connection's layouts stay the same (``forgetSlotStatements()`` forgets them with the slots).
    func statement(shape: Int, _ sql: () throws(StrataError) -> String) throws(StrataError) -> SQLiteStatement {
        if let statement = shapes[shape] { return statement }
        let statement = try prepare(try sql())
        if shapes.count < Self.cacheLimit { shapes[shape] = statement }
        return statement
    }

    private func prepare(_ sql: String) throws(StrataError) -> SQLiteStatement {
        guard let db = unsafe db else { throw .misuse("the SQLite connection to \(path) is closed") }
        var handle: OpaquePointer?
        let rc = unsafe sqlite3_prepare_v3(db, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &handle, nil)
        unsafe try check(rc, db: db, path: path, sql: sql)
        guard let handle = unsafe handle else { throw .misuse("empty SQL statement: \(sql)") }
        return unsafe SQLiteStatement(handle: handle, sql: sql, path: path)
    }

    /// Runs a query returning one integer (or nil when it returns no row or NULL).
    func queryInt64(_ sql: String, _ parameters: [StoredValue] = []) throws(StrataError) -> Int64? {
        let statement = try statement(sql)
        defer { statement.reset() }
        for (offset, value) in parameters.enumerated() { try statement.bind(value, at: Int32(offset + 1)) }
        guard try statement.step(), !statement.isNull(at: 0) else { return nil }
        return statement.int64(at: 0)
    }

    /// Runs a query returning one text (or nil).
    func queryText(_ sql: String, _ parameters: [StoredValue] = []) throws(StrataError) -> String? {
        let statement = try statement(sql)
        defer { statement.reset() }
        for (offset, value) in parameters.enumerated() { try statement.bind(value, at: Int32(offset + 1)) }
        guard try statement.step() else { return nil }
        return statement.text(at: 0)
    }

    /// Runs a parameterless statement (`BEGIN`, `ROLLBACK`) through the statement cache, for
    /// paths that run it once per snapshot.
    func run(cached sql: String) throws(StrataError) {
        try statement(sql).run()
    }

    /// Fills the temporary membership table (see ``SQLiteFilterSQL``) with `lists`, list `n`
    /// holding the constants of the filter's `n`th membership; an empty `lists` does nothing.
    ///
    /// The table lives in the connection's `temp` database, which a read-only connection can
    /// write; inside a reader's snapshot the rows vanish with its transaction at the latest.
    /// Call ``clearMembershipLists()`` after the query.
    func loadMembershipLists(_ lists: [[StoredValue]]) throws(StrataError) {
        guard !lists.isEmpty else { return }
        try execute("CREATE TEMP TABLE IF NOT EXISTS strata_members (\"list\" INTEGER NOT NULL, \"value\")")
        try execute("DELETE FROM \(SQLiteFilterSQL.membershipTable)")
        let insert = try statement(
            "INSERT INTO \(SQLiteFilterSQL.membershipTable) (\"list\", \"value\") VALUES (?1, ?2)")
        for (list, values) in lists.enumerated() {
            for value in values {
                try insert.checkBound(insert.bindReturningCode(Int64(list), at: 1))
                try insert.checkBound(insert.bindReturningCode(value, at: 2))
                try insert.runRebinding()
            }
        }
        insert.reset()
    }

    /// Empties the temporary membership table after a query that used it.
    func clearMembershipLists() {
        guard let db = unsafe db else { return }
        unsafe sqlite3_exec(db, "DELETE FROM \(SQLiteFilterSQL.membershipTable)", nil, nil, nil)
    }

    /// Rolls back the open transaction, if any, ignoring errors (used on failure paths).
    func rollbackQuietly() {
        guard let db = unsafe db, unsafe sqlite3_get_autocommit(db) == 0 else { return }
        unsafe sqlite3_exec(db, "ROLLBACK", nil, nil, nil)
    }

    /// Whether a transaction is open.
    var inTransaction: Bool {
        guard let db = unsafe db else { return false }
        return unsafe sqlite3_get_autocommit(db) == 0
    }
}

// MARK: Result codes and messages
//
// The C side of error mapping: reading a connection's code and message. The classification
// itself (`strataError(for:message:path:sql:)`) is safe Swift in `SQLiteError.swift`.

/// SQLite's English text for a result code (`sqlite3_errstr`), or nil when it has none.
func sqliteCodeText(_ code: Int32) -> String? {
    guard let text = unsafe sqlite3_errstr(code) else { return nil }
    return unsafe String(cString: text)
}

/// Throws the ``StrataError`` for a failed SQLite call; returns `rc` when it is OK, ROW or DONE.
///
/// This is the one place where SQLite result codes become Strata errors.
/// - Parameters:
///   - rc: the result code of the call.
///   - db: the connection, for `sqlite3_errmsg` (nil when unavailable).
///   - path: the store path, for `.notAStore`.
///   - sql: the statement that failed, when known; quoted (shortened) in unclassified errors.
@discardableResult
@unsafe func check(_ rc: Int32, db: OpaquePointer?, path: String, sql: String? = nil) throws(StrataError) -> Int32 {
    let code = SQLiteResultCode(rc)
    switch code.kind {
    case .ok, .row, .done:
        return rc
    default:
        throw unsafe strataError(for: code, message: errorMessage(db, fallback: code), path: path, sql: sql)
    }
}

/// The message SQLite recorded for the connection's last failure, as SQLite worded it (the code
/// itself travels next to it, in the `NativeError`).
///
/// When the connection's last error has another primary code than `code` (a failure SQLite did not
/// record, such as a bind refused before reaching it), the code's own text (`sqlite3_errstr`) is used.
@unsafe func errorMessage(_ db: OpaquePointer?, fallback code: SQLiteResultCode) -> String {
    guard let db = unsafe db, unsafe sqlite3_extended_errcode(db) & 0xFF == code.primary,
        let text = unsafe sqlite3_errmsg(db)
    else { return sqliteCodeText(code.rawValue) ?? "SQLite result code \(code.rawValue)" }
    return unsafe String(cString: text)
}
