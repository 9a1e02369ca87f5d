import CSQLite
import Foundation
import StrataStorage

/// A prepared statement. Used by one thread at a time, always on its connection's thread of use.
///
/// Bind with the `bind` methods (1-based indexes), step with ``step()``, then ``reset()``.
/// Statements live in their connection's cache and are finalized when it closes; uncached
/// ones finalize on deinit.
///
/// Walled file (strict memory safety): the statement pointer, the C calls on it and the
/// decoding of a result row into a reused ``StoredRow`` stay in here; callers bind, step and
/// read values through safe methods.
@safe final class SQLiteStatement {
    private(set) var handle: OpaquePointer?
    let sql: String
    let path: String

    init(handle: OpaquePointer, sql: String, path: String) {
        unsafe self.handle = unsafe handle
        self.sql = sql
        self.path = path
    }

    deinit { unsafe sqlite3_finalize(handle) }

    /// Finalizes now; the statement must not be used afterwards.
    func finalize() {
        unsafe sqlite3_finalize(handle)
        unsafe handle = nil
    }

    private var db: OpaquePointer? { unsafe sqlite3_db_handle(handle) }

    // MARK: Binding

    func bind(_ value: Int64, at index: Int32) throws(StrataError) {
        unsafe try check(sqlite3_bind_int64(handle, index, value), db: db, path: path, sql: sql)
    }

    func bind(_ value: StoredValue, at index: Int32) throws(StrataError) {
        let rc: Int32
        switch value {
        case .null:
            rc = unsafe sqlite3_bind_null(handle, index)
        case .integer(let v):
            rc = unsafe sqlite3_bind_int64(handle, index, v)
        case .real(let v):
            rc = unsafe sqlite3_bind_double(handle, index, v)
        case .text(let v):
            rc = bindText(v, at: index)
        case .blob(let v):
            rc = bindBlob(v, at: index)
        }
        unsafe try check(rc, db: db, path: path, sql: sql)
    }

    /// Binds a value and returns SQLite's result code unchecked, for loops that bind many
    /// values and check each code with ``checkBound(_:)`` (a comparison, unless it failed).
    @inline(__always)
    func bindReturningCode(_ value: StoredValue, at index: Int32) -> Int32 {
        switch value {
        case .null: unsafe sqlite3_bind_null(handle, index)
        case .integer(let v): unsafe sqlite3_bind_int64(handle, index, v)
        case .real(let v): unsafe sqlite3_bind_double(handle, index, v)
        case .text(let v): bindText(v, at: index)
        case .blob(let v): bindBlob(v, at: index)
        }
    }

    /// ``bindReturningCode(_:at:)`` for an integer.
    @inline(__always)
    func bindReturningCode(_ value: Int64, at index: Int32) -> Int32 {
        unsafe sqlite3_bind_int64(handle, index, value)
    }

    /// Throws the error a bind's result code stands for; nothing when it is `SQLITE_OK`.
    @inline(__always)
    func checkBound(_ rc: Int32) throws(StrataError) {
        if rc != SQLITE_OK { _ = unsafe try check(rc, db: db, path: path, sql: sql) }
    }

    /// Binds the UTF-8 bytes of `text` (copied by SQLite).
    func bindText(_ text: String, at index: Int32) -> Int32 {
        var text = text
        return text.withUTF8 { buffer in
            // An empty buffer may have no base address, and a NULL pointer would bind SQL NULL.
            guard let base = buffer.baseAddress, buffer.count > 0 else {
                return unsafe sqlite3_bind_text(handle, index, "", 0, strata_sqlite_transient())
            }
            // The 64-bit length: SQLite answers SQLITE_TOOBIG past its limit, where an Int32
            // conversion would trap on a text of 2 GiB or more.
            return unsafe base.withMemoryRebound(to: CChar.self, capacity: buffer.count) {
                unsafe sqlite3_bind_text64(
                    handle, index, $0, UInt64(buffer.count), strata_sqlite_transient(), UInt8(SQLITE_UTF8))
            }
        }
    }

    /// Binds the bytes of `data` (copied by SQLite); empty data binds an empty blob, not NULL.
    func bindBlob(_ data: Data, at index: Int32) -> Int32 {
        if data.isEmpty { return unsafe sqlite3_bind_zeroblob(handle, index, 0) }
        return unsafe data.withUnsafeBytes { raw in
            unsafe sqlite3_bind_blob64(handle, index, raw.baseAddress, UInt64(raw.count), strata_sqlite_transient())
        }
    }

    // MARK: Stepping

    /// Steps once; true when a row is available, false when done.
    func step() throws(StrataError) -> Bool {
        let rc = unsafe sqlite3_step(handle)
        if rc == SQLITE_ROW { return true }
        if rc == SQLITE_DONE { return false }
        // Connections enable extended result codes, so `rc` tells UNIQUE from PRIMARY KEY.
        let code = SQLiteResultCode(rc)
        unsafe sqlite3_reset(handle)
        throw unsafe strataError(for: code, message: errorMessage(db, fallback: code), path: path, sql: sql)
    }

    /// Resets the statement and clears its bindings, ready for the next use.
    func reset() {
        unsafe sqlite3_reset(handle)
        unsafe sqlite3_clear_bindings(handle)
    }

    /// Resets the statement but keeps its bindings: for statements whose every parameter is
    /// bound again before each use (lookups by key, row writes), where clearing is wasted work.
    func rewind() {
        unsafe sqlite3_reset(handle)
    }

    /// Runs a statement that returns no rows and resets it.
    func run() throws(StrataError) {
        defer { reset() }
        _ = try step()
    }

    /// ``run()`` for a statement whose every parameter is bound before each use (see ``rewind()``).
    func runRebinding() throws(StrataError) {
        defer { rewind() }
        _ = try step()
    }

    /// The number of rows the last INSERT, UPDATE or DELETE on this connection changed.
    var changes: Int32 { unsafe sqlite3_changes(db) }

    // MARK: Columns

    func int64(at column: Int32) -> Int64 { unsafe sqlite3_column_int64(handle, column) }

    func isNull(at column: Int32) -> Bool { unsafe sqlite3_column_type(handle, column) == SQLITE_NULL }

    func text(at column: Int32) -> String? {
        guard let bytes = unsafe sqlite3_column_text(handle, column) else { return nil }
        let count = unsafe Int(sqlite3_column_bytes(handle, column))
        let buffer = unsafe UnsafeBufferPointer(start: bytes, count: count)
        // ASCII needs no validation; anything else must be valid UTF-8 (never repaired).
        if unsafe Self.isASCII(buffer) { return unsafe String(decoding: buffer, as: UTF8.self) }
        return unsafe String(validating: buffer, as: UTF8.self)
    }

    private static func isASCII(_ buffer: UnsafeBufferPointer<UInt8>) -> Bool {
        var index = 0
        let count = buffer.count
        guard let base = buffer.baseAddress else { return true }
        let raw = unsafe UnsafeRawPointer(base)
        while index + 8 <= count {
            if unsafe raw.loadUnaligned(fromByteOffset: index, as: UInt64.self) & 0x8080_8080_8080_8080 != 0 {
                return false
            }
            index += 8
        }
        while index < count {
            if unsafe base[index] & 0x80 != 0 { return false }
            index += 1
        }
        return true
    }

    /// Decodes a column whose storage class must be `storageClass`, or throws `.storeCorrupt`.
    /// - Parameters:
    ///   - isBool: the column holds a `Bool`: only 0 and 1 are valid.
    ///   - place: names the table, column and row for the error message.
    @inline(__always)
    func value(
        at column: Int32, as storageClass: StorageClass, isBool: Bool, place: () -> String
    ) throws(StrataError) -> StoredValue {
        let type = unsafe sqlite3_column_type(handle, column)
        switch (type, storageClass) {
        case (SQLITE_NULL, _):
            return .null
        case (SQLITE_INTEGER, .integer):
            let v = unsafe sqlite3_column_int64(handle, column)
            if isBool && v != 0 && v != 1 {
                throw .storeCorrupt("\(place()) holds \(v), but a Bool column holds only 0 or 1")
            }
            return .integer(v)
        case (SQLITE_FLOAT, .real):
            return unsafe .real(sqlite3_column_double(handle, column))
        case (SQLITE_INTEGER, .real):
            // SQLite may hand back an integral REAL as an INTEGER.
            return unsafe .real(Double(sqlite3_column_int64(handle, column)))
        case (SQLITE_TEXT, .text):
            guard let text = text(at: column) else {
                throw .storeCorrupt("\(place()) holds text that is not valid UTF-8")
            }
            return .text(text)
        case (SQLITE_BLOB, .blob):
            let count = unsafe Int(sqlite3_column_bytes(handle, column))
            guard count > 0, let bytes = unsafe sqlite3_column_blob(handle, column) else { return .blob(Data()) }
            return unsafe .blob(Data(bytes: bytes, count: count))
        default:
            throw .storeCorrupt(
                "\(place()) holds a \(Self.typeName(type)) value, but the column stores \(storageClass.rawValue)")
        }
    }

    private static func typeName(_ type: Int32) -> String {
        switch type {
        case SQLITE_INTEGER: "integer"
        case SQLITE_FLOAT: "real"
        case SQLITE_TEXT: "text"
        case SQLITE_BLOB: "blob"
        default: "null"
        }
    }

    // MARK: Rows

    /// Decodes the current row: id, version, then every column checked against its class.
    ///
    /// Decodes into `row`, whose value storage is reused when nothing else holds it.
    func decodeRow(_ table: SQLiteTableLayout, into row: inout StoredRow) throws(StrataError) {
        let key = int64(at: 0)
        // Stored versions start at 1 and only grow; anything else (text reads as 0) is damage.
        let version = int64(at: 1)
        if version <= 0 {
            throw .storeCorrupt("\(table.entity.name) row \(key) has no valid version")
        }
        let columns = table.decoding
        row.key = key
        row.version = version
        try unsafe row.overwriteValues(count: columns.count) { values throws(StrataError) in
            for column in columns.indices {
                let decoding = columns[column]
                let value = try value(at: Int32(column + 2), as: decoding.storageClass, isBool: decoding.isBool) {
                    "\(table.entity.name).\(table.entity.columns[column].name) of row \(key)"
                }
                if value.isNull && !decoding.isOptional {
                    throw .storeCorrupt(
                        """
                        \(table.entity.name).\(table.entity.columns[column].name) of row \(key) is NULL in a \
                        required column
                        """
                    )
                }
                unsafe values[column] = value
            }
        }
    }
}

/// The row a reader decodes every key lookup into: its value array's storage serves the next
/// lookup when the caller copied the values out and kept no reference to the row.
///
/// Exempt from dynamic exclusivity checks (`@exclusivity(unchecked)`, an unsafe construct, so
/// it lives in this walled file): the check costs every lookup two runtime calls that can find
/// nothing, because ``decode(_:_:)`` calls out to nothing that could reach the row again, and
/// the type is not `Sendable`, so one thread at a time uses it.
@safe final class SQLiteReusedRow {
    @exclusivity(unchecked) private var row = StoredRow(key: 0, version: 0, values: [])

    /// Decodes the statement's current row into the reused row and returns it.
    /// - Throws: `StrataError.storeCorrupt`, as ``SQLiteStatement/decodeRow(_:into:)``.
    @inline(__always)
    func decode(_ statement: SQLiteStatement, _ table: SQLiteTableLayout) throws(StrataError) -> StoredRow {
        try unsafe statement.decodeRow(table, into: &row)
        return unsafe row
    }
}
