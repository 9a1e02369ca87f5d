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

    /// About how many bytes the parameter sends (its values' sizes, before escaping and headers):
    /// what a commit's pipeline counts against its byte budget.
    var approximateByteCount: Int {
        switch self {
        case .null: 0
        case .int8, .float8: 8
        case .text(let value), .rawText(let value): value.utf8.count
        case .bytea(let value): value.count
        case .int8Array(let values): values.count * 8
        case .float8Array(let values): values.count * 8
        case .textArray(let values): values.reduce(0) { $0 + $1.utf8.count }
        case .byteaArray(let values): values.reduce(0) { $0 + $1.count }
        case .encodedArray(_, let bytes): bytes.count
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
        // Arrays are built in one buffer, element by element (`PGArrayEncoder`): a key list of
        // a large commit has tens of thousands of elements.
        case .int8Array(let values):
            bytes = Self.array(elementOID: Self.int8OID, values.lazy.map { .int8($0) }, count: values.count)
        case .float8Array(let values):
            bytes = Self.array(elementOID: Self.float8OID, values.lazy.map { .float8($0) }, count: values.count)
        case .textArray(let values):
            bytes = Self.array(elementOID: Self.textOID, values.lazy.map { .text($0) }, count: values.count)
        case .byteaArray(let values):
            bytes = Self.array(elementOID: Self.byteaOID, values.lazy.map { .bytea($0) }, count: values.count)
        case .encodedArray(_, let encoded): bytes = encoded
        }
        return bytes
    }

    private static func append(_ value: UInt64, to bytes: inout [UInt8]) {
        for shift in stride(from: 56, through: 0, by: -8) {
            bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
        }
    }

    /// The binary array of `elements` (`count` of them), all of type `elementOID`, in
    /// `array_send`'s layout: dimensions, null flag, element type, (length, lower bound), elements.
    private static func array(
        elementOID: UInt32, _ elements: some Sequence<PGParameter>, count: Int
    ) -> [UInt8] {
        var array = PGArrayEncoder(elementOID: elementOID, reservingElements: count)
        for element in elements { array.append(element) }
        guard case .encodedArray(_, let bytes) = array.finish() else { return [] }
        return bytes
    }
}
