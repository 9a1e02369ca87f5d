import CPostgres
import Foundation

/// One libpq connection of the benchmark: the raw PostgreSQL baseline's, and the one that makes
/// and drops the run's schemas. Text commands, statements prepared once with int8 parameters,
/// binary parameters and binary results. Used by one thread at a time (libpq's rule).
final class PGLink {
    let connection: OpaquePointer
    /// Statement names by SQL text, prepared on this connection.
    private var prepared: [String: String] = [:]

    /// Connects to `url` (a libpq URL or key-value string) within 5 seconds, unless the URL sets
    /// its own `connect_timeout`.
    /// - Throws: ``BenchmarkError/raw(_:)`` with libpq's reason, never the password: a URL
    ///   libpq cannot parse is reported without libpq's text, which may quote it.
    init(url: String, applicationName: String = "strata-bench") throws(BenchmarkError) {
        var parseError: UnsafeMutablePointer<CChar>?
        guard let options = PQconninfoParse(url, &parseError) else {
            if let parseError { PQfreemem(parseError) }
            throw .raw("PostgreSQL: the URL \(PGLink.redacted(url)) is malformed; check its syntax")
        }
        PQconninfoFree(options)
        let keywords = ["connect_timeout", "application_name", "dbname"]
        let values = ["5", applicationName, url]
        let made = withCStrings(keywords) { keywords in
            withCStrings(values) { values in PQconnectdbParams(keywords, values, 1) }
        }
        guard let made else { throw .raw("PostgreSQL: out of memory while connecting") }
        guard PQstatus(made) == CONNECTION_OK else {
            let message = String(cString: PQerrorMessage(made)).trimmingCharacters(in: .whitespacesAndNewlines)
            PQfinish(made)
            throw .raw("PostgreSQL: could not connect to \(PGLink.redacted(url)): \(message)")
        }
        connection = made
    }

    deinit { PQfinish(connection) }

    /// The server's version, e.g. `15.20`.
    var serverVersion: String {
        let number = Int(PQserverVersion(connection))
        return "\(number / 10_000).\(number % 10_000)"
    }

    /// libpq's version, e.g. `15.20`.
    static var libraryVersion: String {
        let number = Int(PQlibVersion())
        return "\(number / 10_000).\(number % 10_000)"
    }

    /// Runs SQL without parameters (several statements allowed) and returns the last one's rows
    /// as text.
    @discardableResult
    func execute(_ sql: String) throws(BenchmarkError) -> [[String]] {
        let result = PQexec(connection, sql)
        return try consume(result, what: sql) { result in
            (0..<PQntuples(result)).map { row in
                (0..<PQnfields(result)).map { column in String(cString: PQgetvalue(result, row, column)) }
            }
        }
    }

    /// Runs a statement prepared once per connection, with int8 parameters in binary, and reads
    /// its binary result with `body`.
    func query<T>(_ sql: String, _ parameters: [Int64] = [], body: (PGRows) throws -> T) throws -> T {
        let name = try statement(sql, types: [Oid](repeating: PGType.int8, count: parameters.count))
        var bigEndian = parameters.map { UInt64(bitPattern: $0).bigEndian }
        let result = bigEndian.withUnsafeMutableBytes { bytes -> OpaquePointer? in
            let base = bytes.baseAddress?.assumingMemoryBound(to: CChar.self)
            let values: [UnsafePointer<CChar>?] = (0..<parameters.count).map { UnsafePointer(base! + $0 * 8) }
            let lengths = [Int32](repeating: 8, count: parameters.count)
            let formats = [Int32](repeating: 1, count: parameters.count)
            return PQexecPrepared(connection, name, Int32(parameters.count), values, lengths, formats, 1)
        }
        return try consume(result, what: sql) { try body(PGRows(result: $0)) }
    }

    /// Runs one prepared statement `count` times in pipeline mode, in batches, each with the
    /// parameters `bind` fills for its index; fails on the first statement that fails.
    ///
    /// Batches (of `batch` statements, then a sync) keep both directions' buffers small: a
    /// blocking connection that sent every statement before reading any result could wait
    /// forever on a server waiting for it to read.
    func pipeline(
        _ sql: String, types: [Oid], count: Int, batch: Int = 1_000, bind: (Int, inout PGParameters) -> Void
    ) throws(BenchmarkError) {
        let name = try statement(sql, types: types)
        guard PQenterPipelineMode(connection) == 1 else { throw failure("enter pipeline mode") }
        defer { PQexitPipelineMode(connection) }
        var parameters = PGParameters(count: types.count)
        var start = 0
        while start < count {
            let end = min(start + batch, count)
            for index in start..<end {
                bind(index, &parameters)
                let sent = parameters.withArrays { values, lengths, formats in
                    PQsendQueryPrepared(connection, name, Int32(types.count), values, lengths, formats, 1)
                }
                guard sent == 1 else { throw failure("send statement \(index + 1) of \(sql)") }
            }
            guard PQpipelineSync(connection) == 1 else { throw failure("sync the pipeline") }
            if let problem = drainToSync() { throw .raw("PostgreSQL: \(sql): \(problem)") }
            start = end
        }
    }

    /// Reads the pipeline's results up to its sync; returns the first failure's message.
    private func drainToSync() -> String? {
        var problem: String?
        var emptyInARow = 0
        while emptyInARow < 2 {
            guard let result = PQgetResult(connection) else {
                emptyInARow += 1
                continue
            }
            emptyInARow = 0
            let status = PQresultStatus(result)
            if status == PGRES_PIPELINE_SYNC {
                PQclear(result)
                return problem
            }
            if status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK && problem == nil {
                problem = String(cString: PQresultErrorMessage(result)).trimmingCharacters(in: .whitespacesAndNewlines)
            }
            PQclear(result)
        }
        return problem ?? "the pipeline ended without its sync"
    }

    /// The name of `sql` prepared on this connection with these parameter types.
    func statement(_ sql: String, types: [Oid]) throws(BenchmarkError) -> String {
        if let name = prepared[sql] { return name }
        let name = "b\(prepared.count + 1)"
        let result = PQprepare(connection, name, sql, Int32(types.count), types)
        try consume(result, what: "prepare \(sql)") { _ in () }
        prepared[sql] = name
        return name
    }

    /// Checks a result, hands it to `body` and always frees it.
    func consume<T>(
        _ result: OpaquePointer?, what: String, _ body: (OpaquePointer) throws -> T
    ) throws(BenchmarkError) -> T {
        guard let result else { throw failure(what) }
        defer { PQclear(result) }
        let status = PQresultStatus(result)
        guard status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK else {
            let message = String(cString: PQresultErrorMessage(result))
            throw .raw("PostgreSQL: \(what): \(message.trimmingCharacters(in: .whitespacesAndNewlines))")
        }
        do {
            return try body(result)
        } catch let error as BenchmarkError {
            throw error
        } catch {
            throw .raw("PostgreSQL: \(what): \(error)")
        }
    }

    private func failure(_ what: String) -> BenchmarkError {
        let message = String(cString: PQerrorMessage(connection)).trimmingCharacters(in: .whitespacesAndNewlines)
        return .raw("PostgreSQL: \(what): \(message)")
    }

    /// `url` with the password of its user-info part replaced by `***` (key-value strings
    /// are shown as their keys only).
    static func redacted(_ url: String) -> String {
        guard let scheme = url.range(of: "://") else {
            let keys = url.split(separator: " ").compactMap { $0.split(separator: "=").first }
            return "(" + keys.joined(separator: " ") + ")"
        }
        let rest = url[scheme.upperBound...]
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        guard let at = authority.lastIndex(of: "@"), let colon = authority[..<at].firstIndex(of: ":") else {
            return url
        }
        return String(url[..<colon]) + ":***" + String(url[at...])
    }
}

/// A binary result's rows.
struct PGRows {
    let result: OpaquePointer

    var count: Int { Int(PQntuples(result)) }

    @inline(__always)
    func int64(_ row: Int, _ column: Int32) -> Int64 {
        Int64(bigEndian: UnsafeRawPointer(PQgetvalue(result, Int32(row), column)).loadUnaligned(as: Int64.self))
    }

    @inline(__always)
    func double(_ row: Int, _ column: Int32) -> Double {
        let bits = UnsafeRawPointer(PQgetvalue(result, Int32(row), column)).loadUnaligned(as: UInt64.self)
        return Double(bitPattern: UInt64(bigEndian: bits))
    }

    @inline(__always)
    func text(_ row: Int, _ column: Int32) -> String {
        let bytes = UnsafeRawBufferPointer(
            start: PQgetvalue(result, Int32(row), column), count: Int(PQgetlength(result, Int32(row), column)))
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// One statement's parameters in binary: int8 and float8 as 8 bytes big-endian, text as its
/// UTF-8 bytes; reused from row to row.
struct PGParameters {
    private var fixed: [UInt64]
    private var texts: [String?]

    init(count: Int) {
        fixed = [UInt64](repeating: 0, count: count)
        texts = [String?](repeating: nil, count: count)
    }

    mutating func set(_ index: Int, _ value: Int64) { fixed[index] = UInt64(bitPattern: value).bigEndian }
    mutating func set(_ index: Int, _ value: Double) { fixed[index] = value.bitPattern.bigEndian }
    mutating func set(_ index: Int, _ value: String) { texts[index] = value }

    /// Calls `body` with libpq's three parameter arrays (values, lengths, formats).
    func withArrays<T>(
        _ body: (UnsafePointer<UnsafePointer<CChar>?>, UnsafePointer<Int32>, UnsafePointer<Int32>) -> T
    ) -> T {
        let count = fixed.count
        let texts = texts
        return fixed.withUnsafeBytes { bytes in
            let base = bytes.baseAddress!.assumingMemoryBound(to: CChar.self)
            var values = [UnsafePointer<CChar>?](repeating: nil, count: count)
            var lengths = [Int32](repeating: 8, count: count)
            let formats = [Int32](repeating: 1, count: count)
            for index in 0..<count { values[index] = UnsafePointer(base + index * 8) }
            return Self.withTexts(texts, from: 0, &values, &lengths) { values, lengths in
                body(values, lengths, formats)
            }
        }
    }

    /// Points the text parameters at their UTF-8 bytes for the length of `body`.
    private static func withTexts<T>(
        _ texts: [String?], from index: Int, _ values: inout [UnsafePointer<CChar>?], _ lengths: inout [Int32],
        _ body: (UnsafePointer<UnsafePointer<CChar>?>, UnsafePointer<Int32>) -> T
    ) -> T {
        guard let next = texts[index...].firstIndex(where: { $0 != nil }), var text = texts[next] else {
            return body(values, lengths)
        }
        return text.withUTF8 { utf8 in
            values[next] = UnsafeRawPointer(utf8.baseAddress ?? UnsafePointer(bitPattern: 1)!)
                .assumingMemoryBound(to: CChar.self)
            lengths[next] = Int32(utf8.count)
            return withTexts(texts, from: next + 1, &values, &lengths, body)
        }
    }
}

/// The type OIDs of the benchmark's parameters (`pg_type.oid`).
enum PGType {
    static let int8: Oid = 20
    static let text: Oid = 25
    static let float8: Oid = 701
}

/// Calls `body` with `strings` as a NULL-terminated array of C strings.
private func withCStrings<T>(_ strings: [String], _ body: (UnsafePointer<UnsafePointer<CChar>?>) -> T) -> T {
    let copies = strings.map { strdup($0) }
    defer { copies.forEach { free($0) } }
    let pointers = copies.map { UnsafePointer($0) } + [nil]
    return body(pointers)
}
