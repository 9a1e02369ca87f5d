// Walled file (strict memory safety): reading libpq results. Values leave as Swift values.
import CPostgres
import Foundation

/// One `PGresult`, cleared when released. Columns are read in the format the statement asked
/// for (binary for every engine read; see ``PGConnection/execute(_:_:binaryResults:deadline:)``).
@safe final class PGResult {
    private let result: OpaquePointer

    /// The number of rows (a result does not change once made: read once).
    let rowCount: Int

    /// The number of columns.
    let columnCount: Int

    /// Takes ownership of a result.
    init(taking result: OpaquePointer) {
        unsafe self.result = result
        rowCount = Int(unsafe PQntuples(result))
        columnCount = Int(unsafe PQnfields(result))
    }

    deinit { unsafe PQclear(result) }

    /// Whether this is the result that ends a pipeline (`PGRES_PIPELINE_SYNC`).
    var isPipelineSync: Bool { unsafe PQresultStatus(result) == PGRES_PIPELINE_SYNC }

    /// Whether the server skipped this pipelined statement because one before it failed
    /// (`PGRES_PIPELINE_ABORTED`).
    var isPipelineAborted: Bool { unsafe PQresultStatus(result) == PGRES_PIPELINE_ABORTED }

    /// A column's type OID.
    func type(ofColumn column: Int) -> UInt32 { unsafe PQftype(result, Int32(column)) }

    /// The rows a command affected (`PQcmdTuples`), 0 when it does not say.
    var affectedRows: Int { Int(unsafe String(cString: PQcmdTuples(result))) ?? 0 }

    /// Whether a value is NULL. Like every value read here, it checks its cell first
    /// (``checkCell(_:_:)``): a row or column outside the result stops the program (in release
    /// builds too) instead of reading libpq's memory out of bounds.
    func isNull(_ row: Int, _ column: Int) -> Bool {
        checkCell(row, column)
        return unsafe PQgetisnull(result, Int32(row), Int32(column)) == 1
    }

    /// Stops the program when (`row`, `column`) is not a cell of the result (libpq would read
    /// past its arrays' ends, or answer as for NULL).
    @inline(__always)
    private func checkCell(_ row: Int, _ column: Int) {
        precondition(
            row >= 0 && row < rowCount && column >= 0 && column < columnCount,
            "no cell (\(row), \(column)) in a result of \(rowCount) × \(columnCount)")
    }

    /// A binary `int8` (or `int4`) value; nil for NULL or another length. (libpq gives a NULL
    /// a length of 0, so the length check alone turns it away: one call fewer per value.)
    func int64(_ row: Int, _ column: Int) -> Int64? {
        checkCell(row, column)
        let length = Int(unsafe PQgetlength(result, Int32(row), Int32(column)))
        guard length == 8 || length == 4, let pointer = unsafe PQgetvalue(result, Int32(row), Int32(column)) else {
            return nil
        }
        // Network byte order; the length was checked above, so each load stays inside the value.
        if length == 4 {
            return Int64(Int32(bigEndian: unsafe UnsafeRawPointer(pointer).loadUnaligned(as: Int32.self)))
        }
        return Int64(bigEndian: unsafe UnsafeRawPointer(pointer).loadUnaligned(as: Int64.self))
    }

    /// A binary `float8` value; nil for NULL or another length (a NULL's length is 0).
    func double(_ row: Int, _ column: Int) -> Double? {
        checkCell(row, column)
        guard unsafe PQgetlength(result, Int32(row), Int32(column)) == 8,
            let pointer = unsafe PQgetvalue(result, Int32(row), Int32(column))
        else { return nil }
        // Network byte order; the length was checked above.
        return Double(bitPattern: UInt64(bigEndian: unsafe UnsafeRawPointer(pointer).loadUnaligned(as: UInt64.self)))
    }

    /// The bytes of a value where libpq keeps them (valid while this result lives), nil for NULL;
    /// checks the cell first. A NULL's length is 0: only an empty value needs libpq's NULL flag.
    @unsafe @inline(__always)
    private func value(_ row: Int, _ column: Int) -> UnsafeRawBufferPointer? {
        checkCell(row, column)
        let length = Int(unsafe PQgetlength(result, Int32(row), Int32(column)))
        if length == 0 { return isNull(row, column) ? nil : unsafe UnsafeRawBufferPointer(start: nil, count: 0) }
        guard let pointer = unsafe PQgetvalue(result, Int32(row), Int32(column)) else { return nil }
        return unsafe UnsafeRawBufferPointer(start: pointer, count: length)
    }

    /// The raw bytes of a value (binary `bytea`/`text`, or any text-format value); nil for NULL.
    func bytes(_ row: Int, _ column: Int) -> [UInt8]? {
        guard let value = unsafe value(row, column) else { return nil }
        return unsafe Array(value)
    }

    /// The raw bytes of a value as `Data`, copied once; nil for NULL.
    func data(_ row: Int, _ column: Int) -> Data? {
        guard let value = unsafe value(row, column) else { return nil }
        return unsafe Data(value)
    }

    /// A value's bytes as UTF-8 text, unescaped (``PostgresTextEscape``); nil for NULL or bytes that
    /// are not UTF-8. A text without escapes is made straight from the result's buffer.
    func text(_ row: Int, _ column: Int) -> String? {
        guard let value = unsafe value(row, column) else { return nil }
        let units = unsafe value.assumingMemoryBound(to: UInt8.self)
        // Most texts are ASCII without the escape byte: made straight from the buffer, with nothing
        // to unescape or validate (ASCII is valid UTF-8). `String(validating:)` would cost a generic
        // call with its metadata look-ups per value.
        if unsafe Self.isPlain(value) { return unsafe String(decoding: units, as: UTF8.self) }
        return unsafe PostgresTextEscape.decode(units)
    }

    /// Whether every byte of `bytes` is ASCII and above ``PostgresTextEscape/highestEscapedByte``
    /// (a text with nothing to unescape or validate). Eight bytes a step: a word holds a byte of
    /// 0x80 or more when `w & 0x8080…` is not zero, and one below 0x02 exactly when
    /// `(w - 0x0202…) & ~w & 0x8080…` is not zero (a borrow starts only at such a byte, and the
    /// lowest one sets its own high bit).
    @unsafe @inline(__always)
    private static func isPlain(_ bytes: UnsafeRawBufferPointer) -> Bool {
        let count = bytes.count
        guard count > 0, let base = bytes.baseAddress else { return true }
        let high: UInt64 = 0x8080_8080_8080_8080
        // 0x0202…: one more than the highest escaped byte, in every byte (the test below needs
        // it to be at most 0x80).
        let below = 0x0101_0101_0101_0101 &* UInt64(PostgresTextEscape.highestEscapedByte &+ 1)
        var index = 0
        // Each load reads bytes index ..< index + 8, all inside the value (index + 8 <= count).
        while index &+ 8 <= count {
            let word = unsafe base.loadUnaligned(fromByteOffset: index, as: UInt64.self)
            if word & high != 0 || (word &- below) & ~word & high != 0 { return false }
            index &+= 8
        }
        while index < count {
            let unit = unsafe base.load(fromByteOffset: index, as: UInt8.self)
            if unit >= 0x80 || unit <= PostgresTextEscape.highestEscapedByte { return false }
            index &+= 1
        }
        return true
    }

    /// Whether the text read from `bytes` would be made straight from them (`isPlain` of their
    /// buffer), for tests.
    static func isPlainText(_ bytes: [UInt8]) -> Bool {
        unsafe bytes.withUnsafeBytes { unsafe isPlain($0) }
    }

    /// The error of a failed result, nil for a successful one.
    func failure(broken: Bool) -> PGFailure? {
        switch unsafe PQresultStatus(result) {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY, PGRES_SINGLE_TUPLE:
            return nil
        default:
            func field(_ code: Int32) -> String? {
                unsafe PQresultErrorField(result, code).map { unsafe String(cString: $0) }
            }
            let whole = unsafe String(cString: PQresultErrorMessage(result))
            let message =
                field(strata_pg_diag_message_primary()) ?? whole.trimmingCharacters(in: .whitespacesAndNewlines)
            return PGFailure(
                sqlState: field(strata_pg_diag_sqlstate()), message: message,
                detail: field(strata_pg_diag_message_detail()), constraint: field(strata_pg_diag_constraint_name()),
                table: field(strata_pg_diag_table_name()), connectionBroken: broken)
        }
    }
}
