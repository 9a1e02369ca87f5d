import Foundation

/// Builds a one-dimensional array parameter in PostgreSQL's binary format (`array_send`'s layout)
/// one element at a time, NULLs included, without an allocation per element: the batched writes of
/// a commit (`INSERT … SELECT … FROM unnest($1, $2, …)`) send one array per column.
///
/// The buffer starts with room for the header, which ``finish()`` fills in, so the array is
/// built in one buffer and handed over without a copy (a 300 MB text is held once, not thrice).
/// The buffer is kept allocated (its count) ahead of ``length`` and written in place through a
/// span: one capacity check per element, not one per byte.
struct PGArrayEncoder {
    private let elementOID: UInt32
    /// The header's room (``headerSize`` bytes), then the elements, then room up to its count.
    private var body: [UInt8]
    /// The bytes of `body` in use.
    private var length = Self.headerSize
    private var count: Int32 = 0
    private var hasNull = false

    /// The header of a non-empty array: five 32-bit fields.
    private static let headerSize = 20

    init(elementOID: UInt32, reservingElements capacity: Int = 0) {
        self.elementOID = elementOID
        body = [UInt8](repeating: 0, count: Self.headerSize + max(capacity, 1) * 12)
    }

    /// Appends one element: a stored value bound as its column's type (``PGParameter``'s encoding).
    mutating func append(_ parameter: PGParameter) {
        count += 1
        switch parameter {
        case .null:
            hasNull = true
            appendField(-1)
        case .int8(let value):
            appendElement64(UInt64(bitPattern: value))
        case .float8(let value):
            appendElement64(value.bitPattern)
        case .text(let text):
            // Copied as is, checking each byte on the way; a text that needs the escape (rare)
            // is written again, escaped, over the copy.
            let bytes = text.utf8.span
            let offset = reserve(4 + bytes.count)
            var span = body.mutableSpan
            Self.store(UInt32(bytes.count), at: offset, in: &span)
            var lowest: UInt8 = 0xFF
            var index = 0
            while index < bytes.count {
                let byte = bytes[index]
                lowest = min(lowest, byte)
                span[offset + 4 + index] = byte
                index += 1
            }
            if lowest <= PostgresTextEscape.highestEscapedByte {
                length = offset
                appendBytes(PostgresTextEscape.encode(text))
            }
        default:
            appendBytes(parameter.encoded() ?? [])
        }
    }

    /// The array parameter: the header (one dimension, the NULL flag, the element type, the
    /// length, lower bound 1), then the elements. Hands the buffer over: the encoder is empty
    /// afterwards.
    mutating func finish() -> PGParameter {
        let arrayOID = PGParameter.arrayOID(of: elementOID)
        guard count > 0 else {
            // An empty array's header has three fields.
            var bytes = [UInt8](repeating: 0, count: 12)
            var span = bytes.mutableSpan
            Self.store(UInt32(bitPattern: Int32(bitPattern: elementOID)), at: 8, in: &span)
            return .encodedArray(arrayOID: arrayOID, bytes: bytes)
        }
        let fields: [UInt32] = [1, hasNull ? 1 : 0, elementOID, UInt32(count), 1]
        var span = body.mutableSpan
        for (index, field) in fields.enumerated() {
            Self.store(field, at: index * 4, in: &span)
        }
        var bytes = body
        body = []
        bytes.removeLast(bytes.count - length)
        return .encodedArray(arrayOID: arrayOID, bytes: bytes)
    }

    /// Makes room for `size` more bytes, returning where they start: the caller writes every one.
    ///
    /// The room is zeros appended a chunk at a time from ``zeros`` (no temporary the size of a
    /// large text, so a 300 MB text is still held once), at most ``slack`` beyond what is needed;
    /// the capacity grows geometrically, so the copies stay linear in the array's size.
    private mutating func reserve(_ size: Int) -> Int {
        let offset = length
        let needed = offset + size
        if needed > body.count {
            let target = needed + min(needed, Self.slack)
            if target > body.capacity { body.reserveCapacity(max(target, body.capacity * 2)) }
            while body.count < target {
                body += Self.zeros[0..<min(Self.zeros.count, target - body.count)]
            }
        }
        length = needed
        return offset
    }

    /// The most room ``reserve(_:)`` adds beyond what is needed.
    private static let slack = 1 << 20
    /// The zeros ``reserve(_:)`` appends from.
    private static let zeros = [UInt8](repeating: 0, count: 1 << 16)

    /// Appends a 32-bit field, big-endian.
    private mutating func appendField(_ value: Int32) {
        let offset = reserve(4)
        var span = body.mutableSpan
        Self.store(UInt32(bitPattern: value), at: offset, in: &span)
    }

    /// Appends a 64-bit element with its length (8) in front: 12 bytes in one step.
    private mutating func appendElement64(_ value: UInt64) {
        let offset = reserve(12)
        var span = body.mutableSpan
        Self.store(8, at: offset, in: &span)
        Self.store(UInt32(truncatingIfNeeded: value >> 32), at: offset + 4, in: &span)
        Self.store(UInt32(truncatingIfNeeded: value), at: offset + 8, in: &span)
    }

    /// Appends an element of encoded bytes with its length in front.
    private mutating func appendBytes(_ bytes: [UInt8]) {
        let offset = reserve(4 + bytes.count)
        var span = body.mutableSpan
        Self.store(UInt32(bytes.count), at: offset, in: &span)
        for (index, byte) in bytes.enumerated() { span[offset + 4 + index] = byte }
    }

    @inline(__always)
    private static func store(_ bits: UInt32, at offset: Int, in span: inout MutableSpan<UInt8>) {
        span[offset] = UInt8(truncatingIfNeeded: bits >> 24)
        span[offset + 1] = UInt8(truncatingIfNeeded: bits >> 16)
        span[offset + 2] = UInt8(truncatingIfNeeded: bits >> 8)
        span[offset + 3] = UInt8(truncatingIfNeeded: bits)
    }
}
