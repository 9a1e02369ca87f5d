import Foundation

/// A value bound to a statement, sent in PostgreSQL's binary format (never spliced into SQL).
enum PGParameter: Sendable {
    case null(oid: UInt32)
    case int8(Int64)
    case float8(Double)
    /// A text, escaped for storage (``PostgresTextEscape``).
    case text(String)
    /// A text sent as is (names, metadata values that never hold U+0000).
    case rawText(String)
    case bytea(Data)
    case int8Array([Int64])
    case float8Array([Double])
    case textArray([String])
    case byteaArray([Data])
    /// An array already in binary form (``PGArrayEncoder``), of type `arrayOID`.
    case encodedArray(arrayOID: UInt32, bytes: [UInt8])

    static let int8OID: UInt32 = 20
    static let float8OID: UInt32 = 701
    static let textOID: UInt32 = 25
    static let byteaOID: UInt32 = 17

    /// The type the server reads the parameter as.
    var typeOID: UInt32 {
        switch self {
        case .null(let oid): oid
        case .int8: Self.int8OID
        case .float8: Self.float8OID
        case .text, .rawText: Self.textOID
        case .bytea: Self.byteaOID
        case .int8Array: 1016
        case .float8Array: 1022
        case .textArray: 1009
        case .byteaArray: 1001
        case .encodedArray(let oid, _): oid
        }
    }

    /// The array type of an element type (`int8` → `int8[]`).
    static func arrayOID(of elementOID: UInt32) -> UInt32 {
        switch elementOID {
        case int8OID: 1016
        case float8OID: 1022
        case textOID: 1009
        default: 1001
        }
    }

    /// The binary wire form; nil for NULL.
    func encoded() -> [UInt8]? {
        var bytes: [UInt8] = []
        switch self {
        case .null: return nil
        case .int8(let value): Self.append(UInt64(bitPattern: value), to: &bytes)
        case .float8(let value): Self.append(value.bitPattern, to: &bytes)
        case .text(let value): bytes = PostgresTextEscape.encode(value)
        case .rawText(let value): bytes = Array(value.utf8)
        case .bytea(let value): bytes = Array(value)
        case .int8Array(let values):
            bytes = Self.array(
                elementOID: Self.int8OID,
                values.map { value in
                    var element: [UInt8] = []
                    Self.append(UInt64(bitPattern: value), to: &element)
                    return element
                })
        case .float8Array(let values):
            bytes = Self.array(
                elementOID: Self.float8OID,
                values.map { value in
                    var element: [UInt8] = []
                    Self.append(value.bitPattern, to: &element)
                    return element
                })
        case .textArray(let values): bytes = Self.array(elementOID: Self.textOID, values.map(PostgresTextEscape.encode))
        case .byteaArray(let values): bytes = Self.array(elementOID: Self.byteaOID, values.map { Array($0) })
        case .encodedArray(_, let encoded): bytes = encoded
        }
        return bytes
    }

    private static func append(_ value: UInt64, to bytes: inout [UInt8]) {
        for shift in stride(from: 56, through: 0, by: -8) {
            bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
        }
    }

    private static func append32(_ value: Int32, to bytes: inout [UInt8]) {
        let bits = UInt32(bitPattern: value)
        for shift in stride(from: 24, through: 0, by: -8) {
            bytes.append(UInt8(truncatingIfNeeded: bits >> UInt32(shift)))
        }
    }

    /// `array_send`'s layout: dimensions, null flag, element type, (length, lower bound), elements.
    private static func array(elementOID: UInt32, _ elements: [[UInt8]]) -> [UInt8] {
        var bytes: [UInt8] = []
        guard !elements.isEmpty else {
            append32(0, to: &bytes)
            append32(0, to: &bytes)
            append32(Int32(bitPattern: elementOID), to: &bytes)
            return bytes
        }
        append32(1, to: &bytes)
        append32(0, to: &bytes)
        append32(Int32(bitPattern: elementOID), to: &bytes)
        append32(Int32(elements.count), to: &bytes)
        append32(1, to: &bytes)
        for element in elements {
            append32(Int32(element.count), to: &bytes)
            bytes.append(contentsOf: element)
        }
        return bytes
    }
}
