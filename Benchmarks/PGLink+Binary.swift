import CPostgres
import Foundation

/// One binary parameter of a libpq statement: its type and its bytes in PostgreSQL's binary
/// format (integers big-endian; arrays as `array_send` writes them).
struct PGValue {
    var type: Oid
    var bytes: [UInt8]

    static func int8(_ value: Int64) -> PGValue {
        PGValue(type: PGType.int8, bytes: bigEndian(value))
    }

    static func text(_ value: String) -> PGValue {
        PGValue(type: PGType.text, bytes: Array(value.utf8))
    }

    /// An `int8[]` of one dimension.
    static func int8Array<C: Collection<Int64>>(_ values: C) -> PGValue {
        var bytes = arrayHeader(count: values.count, element: PGType.int8)
        bytes.reserveCapacity(bytes.count + values.count * 12)
        for value in values {
            bytes += bigEndian(Int32(8))
            bytes += bigEndian(value)
        }
        return PGValue(type: PGType.int8Array, bytes: bytes)
    }

    /// A `text[]` of one dimension.
    static func textArray<C: Collection<String>>(_ values: C) -> PGValue {
        var bytes = arrayHeader(count: values.count, element: PGType.text)
        for value in values {
            bytes += bigEndian(Int32(value.utf8.count))
            bytes += value.utf8
        }
        return PGValue(type: PGType.textArray, bytes: bytes)
    }

    /// Dimensions, the null flag, the element type, then the one dimension's size and lower bound.
    private static func arrayHeader(count: Int, element: Oid) -> [UInt8] {
        bigEndian(Int32(1)) + bigEndian(Int32(0)) + bigEndian(Int32(bitPattern: element)) + bigEndian(Int32(count))
            + bigEndian(Int32(1))
    }

    private static func bigEndian<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
        withUnsafeBytes(of: value.bigEndian) { Array($0) }
    }
}

extension PGType {
    static let int8Array: Oid = 1016
    static let textArray: Oid = 1009
}

extension PGLink {
    /// Runs a statement prepared once per connection with binary parameters of any type, and
    /// reads its binary result with `body`.
    func run<T>(_ sql: String, _ parameters: [PGValue], body: (PGRows, Int) throws -> T) throws -> T {
        let name = try statement(sql, types: parameters.map(\.type))
        let result = Self.withPointers(parameters) { values, lengths, formats in
            PQexecPrepared(connection, name, Int32(parameters.count), values, lengths, formats, 1)
        }
        return try consume(result, what: sql) { result in
            try body(PGRows(result: result), Int(String(cString: PQcmdTuples(result))) ?? 0)
        }
    }

    /// Runs a statement with binary parameters; returns the rows it changed.
    @discardableResult
    func command(_ sql: String, _ parameters: [PGValue]) throws -> Int {
        try run(sql, parameters) { _, changed in changed }
    }

    /// Runs SQL without parameters (a `FETCH` from a binary cursor) and reads its result with `body`.
    func rows<T>(_ sql: String, body: (PGRows) throws -> T) throws -> T {
        try consume(PQexec(connection, sql), what: sql) { try body(PGRows(result: $0)) }
    }

    private static func withPointers<T>(
        _ parameters: [PGValue],
        _ body: (UnsafePointer<UnsafePointer<CChar>?>, UnsafePointer<Int32>, UnsafePointer<Int32>) -> T
    ) -> T {
        let copies = parameters.map { parameter -> UnsafeMutableRawPointer in
            let memory = UnsafeMutableRawPointer.allocate(byteCount: max(parameter.bytes.count, 1), alignment: 8)
            parameter.bytes.withUnsafeBytes { bytes in
                if let base = bytes.baseAddress { memory.copyMemory(from: base, byteCount: bytes.count) }
            }
            return memory
        }
        defer { copies.forEach { $0.deallocate() } }
        let values = copies.map { UnsafePointer<CChar>?($0.assumingMemoryBound(to: CChar.self)) }
        let lengths = parameters.map { Int32($0.bytes.count) }
        let formats = [Int32](repeating: 1, count: parameters.count)
        return body(values, lengths, formats)
    }
}
