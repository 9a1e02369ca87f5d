// Walled file (strict memory safety): reading libpq results. Values leave as Swift values.
import CPostgres
import Foundation

/// One `PGresult`, cleared when released. Columns are read in the format the statement asked
/// for (binary for every engine read; see ``PGConnection/execute(_:_:binaryResults:deadline:)``).
@safe final class PGResult {
    private let result: OpaquePointer

    /// Takes ownership of a result.
    init(taking result: OpaquePointer) { unsafe self.result = result }

    deinit { unsafe PQclear(result) }

    /// The number of rows.
    var rowCount: Int { Int(unsafe PQntuples(result)) }

    /// The number of columns.
    var columnCount: Int { Int(unsafe PQnfields(result)) }

    /// A column's type OID.
    func type(ofColumn column: Int) -> UInt32 { unsafe PQftype(result, Int32(column)) }

    /// The rows a command affected (`PQcmdTuples`), 0 when it does not say.
    var affectedRows: Int { Int(unsafe String(cString: PQcmdTuples(result))) ?? 0 }

    /// Whether a value is NULL. Every value read starts here, so this is where a row or column
    /// outside the result stops the program (in release builds too) instead of reading libpq's
    /// memory out of bounds.
    func isNull(_ row: Int, _ column: Int) -> Bool {
        precondition(
            row >= 0 && row < rowCount && column >= 0 && column < columnCount,
            "no cell (\(row), \(column)) in a result of \(rowCount) × \(columnCount)")
        return unsafe PQgetisnull(result, Int32(row), Int32(column)) == 1
    }

    /// A binary `int8` (or `int4`) value; nil for NULL or another length.
    func int64(_ row: Int, _ column: Int) -> Int64? {
        guard !isNull(row, column) else { return nil }
        let length = Int(unsafe PQgetlength(result, Int32(row), Int32(column)))
        guard let pointer = unsafe PQgetvalue(result, Int32(row), Int32(column)) else { return nil }
        let raw = unsafe UnsafeRawBufferPointer(start: pointer, count: length)
        var value: UInt64 = 0
        guard length == 8 || length == 4 else { return nil }
        for index in 0..<length { value = value << 8 | UInt64(unsafe raw[index]) }
        if length == 4 { return Int64(Int32(bitPattern: UInt32(truncatingIfNeeded: value))) }
        return Int64(bitPattern: value)
    }

    /// A binary `float8` value; nil for NULL or another length.
    func double(_ row: Int, _ column: Int) -> Double? {
        guard !isNull(row, column), unsafe PQgetlength(result, Int32(row), Int32(column)) == 8,
            let pointer = unsafe PQgetvalue(result, Int32(row), Int32(column))
        else { return nil }
        let raw = unsafe UnsafeRawBufferPointer(start: pointer, count: 8)
        var bits: UInt64 = 0
        for index in 0..<8 { bits = bits << 8 | UInt64(unsafe raw[index]) }
        return Double(bitPattern: bits)
    }

    /// The raw bytes of a value (binary `bytea`/`text`, or any text-format value); nil for NULL.
    func bytes(_ row: Int, _ column: Int) -> [UInt8]? {
        guard !isNull(row, column), let pointer = unsafe PQgetvalue(result, Int32(row), Int32(column)) else {
            return nil
        }
        let length = Int(unsafe PQgetlength(result, Int32(row), Int32(column)))
        return unsafe Array(UnsafeRawBufferPointer(start: pointer, count: length))
    }

    /// The raw bytes of a value as `Data`, copied once; nil for NULL.
    func data(_ row: Int, _ column: Int) -> Data? {
        guard !isNull(row, column), let pointer = unsafe PQgetvalue(result, Int32(row), Int32(column)) else {
            return nil
        }
        let length = Int(unsafe PQgetlength(result, Int32(row), Int32(column)))
        return unsafe Data(bytes: pointer, count: length)
    }

    /// A value's bytes as UTF-8 text, unescaped (``PostgresTextEscape``); nil for NULL or bytes that
    /// are not UTF-8. A text without escapes is made straight from the result's buffer.
    func text(_ row: Int, _ column: Int) -> String? {
        guard !isNull(row, column), let pointer = unsafe PQgetvalue(result, Int32(row), Int32(column)) else {
            return nil
        }
        let length = Int(unsafe PQgetlength(result, Int32(row), Int32(column)))
        return unsafe PostgresTextEscape.decode(UnsafeRawBufferPointer(start: pointer, count: length))
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
