import Foundation

/// Builds a one-dimensional array parameter in PostgreSQL's binary format (`array_send`'s layout)
/// one element at a time, NULLs included, without an allocation per element: the batched writes of
/// a commit (`INSERT … SELECT … FROM unnest($1, $2, …)`) send one array per column.
struct PGArrayEncoder {
    private let elementOID: UInt32
    private var body: [UInt8] = []
    private var count: Int32 = 0
    private var hasNull = false

    init(elementOID: UInt32, reservingElements capacity: Int = 0) {
        self.elementOID = elementOID
        body.reserveCapacity(capacity * 12)
    }

    /// Appends one element: a stored value bound as its column's type (``PGParameter``'s encoding).
    mutating func append(_ parameter: PGParameter) {
        count += 1
        switch parameter {
        case .null:
            hasNull = true
            Self.append32(-1, to: &body)
        case .int8(let value):
            Self.append32(8, to: &body)
            Self.append64(UInt64(bitPattern: value), to: &body)
        case .float8(let value):
            Self.append32(8, to: &body)
            Self.append64(value.bitPattern, to: &body)
        default:
            let bytes = parameter.encoded() ?? []
            Self.append32(Int32(bytes.count), to: &body)
            body.append(contentsOf: bytes)
        }
    }

    /// The array parameter: the header (one dimension, the NULL flag, the element type, the
    /// length, lower bound 1), then the elements.
    func parameter() -> PGParameter {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(body.count + 20)
        Self.append32(count == 0 ? 0 : 1, to: &bytes)
        Self.append32(hasNull ? 1 : 0, to: &bytes)
        Self.append32(Int32(bitPattern: elementOID), to: &bytes)
        if count > 0 {
            Self.append32(count, to: &bytes)
            Self.append32(1, to: &bytes)
            bytes.append(contentsOf: body)
        }
        return .encodedArray(arrayOID: PGParameter.arrayOID(of: elementOID), bytes: bytes)
    }

    private static func append32(_ value: Int32, to bytes: inout [UInt8]) {
        let bits = UInt32(bitPattern: value)
        bytes.append(UInt8(truncatingIfNeeded: bits >> 24))
        bytes.append(UInt8(truncatingIfNeeded: bits >> 16))
        bytes.append(UInt8(truncatingIfNeeded: bits >> 8))
        bytes.append(UInt8(truncatingIfNeeded: bits))
    }

    private static func append64(_ value: UInt64, to bytes: inout [UInt8]) {
        append32(Int32(bitPattern: UInt32(truncatingIfNeeded: value >> 32)), to: &bytes)
        append32(Int32(bitPattern: UInt32(truncatingIfNeeded: value)), to: &bytes)
    }
}
