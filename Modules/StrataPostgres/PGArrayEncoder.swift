import Foundation

/// Builds a one-dimensional array parameter in PostgreSQL's binary format (`array_send`'s layout)
/// one element at a time, NULLs included, without an allocation per element: the batched writes of
/// a commit (`INSERT … SELECT … FROM unnest($1, $2, …)`) send one array per column.
///
/// The buffer starts with room for the header, which ``finish()`` fills in, so the array is
/// built in one buffer and handed over without a copy (a 300 MB text is held once, not thrice).
struct PGArrayEncoder {
    private let elementOID: UInt32
    /// The header's room (``headerSize`` bytes), then the elements.
    private var body: [UInt8]
    private var count: Int32 = 0
    private var hasNull = false

    /// The header of a non-empty array: five 32-bit fields.
    private static let headerSize = 20

    init(elementOID: UInt32, reservingElements capacity: Int = 0) {
        self.elementOID = elementOID
        body = []
        body.reserveCapacity(Self.headerSize + capacity * 12)
        body.append(contentsOf: repeatElement(0, count: Self.headerSize))
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
        case .text(let text):
            // The length goes before the bytes: written once they are in.
            let lengthAt = body.count
            Self.append32(0, to: &body)
            PostgresTextEscape.encode(text, appendingTo: &body)
            Self.write32(Int32(body.count - lengthAt - 4), at: lengthAt, in: &body)
        default:
            let bytes = parameter.encoded() ?? []
            Self.append32(Int32(bytes.count), to: &body)
            body.append(contentsOf: bytes)
        }
    }

    /// The array parameter: the header (one dimension, the NULL flag, the element type, the
    /// length, lower bound 1), then the elements. Hands the buffer over: the encoder is empty
    /// afterwards.
    mutating func finish() -> PGParameter {
        let arrayOID = PGParameter.arrayOID(of: elementOID)
        guard count > 0 else {
            // An empty array's header has three fields.
            var bytes: [UInt8] = []
            Self.append32(0, to: &bytes)
            Self.append32(0, to: &bytes)
            Self.append32(Int32(bitPattern: elementOID), to: &bytes)
            return .encodedArray(arrayOID: arrayOID, bytes: bytes)
        }
        for (index, field) in [1, hasNull ? 1 : 0, Int32(bitPattern: elementOID), count, 1].enumerated() {
            Self.write32(field, at: index * 4, in: &body)
        }
        let bytes = body
        body = []
        return .encodedArray(arrayOID: arrayOID, bytes: bytes)
    }

    private static func write32(_ value: Int32, at offset: Int, in bytes: inout [UInt8]) {
        let bits = UInt32(bitPattern: value)
        bytes[offset] = UInt8(truncatingIfNeeded: bits >> 24)
        bytes[offset + 1] = UInt8(truncatingIfNeeded: bits >> 16)
        bytes[offset + 2] = UInt8(truncatingIfNeeded: bits >> 8)
        bytes[offset + 3] = UInt8(truncatingIfNeeded: bits)
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
