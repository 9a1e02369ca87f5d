/// The order-preserving escape that lets a `text` column hold U+0000 (issue 17, D1).
///
/// PostgreSQL's `text` refuses the byte 0x00. Strata stores `0x00` as `0x01 0x01` and `0x01` as
/// `0x01 0x02`, every other byte unchanged. The code is prefix-free and monotone, so equality,
/// byte order (`COLLATE "C"`), unique indexes and prefixes of escaped texts are those of the
/// originals. A `contains` whose needle starts with U+0000…U+0002 may match across a code word, so
/// readers re-check it in Swift. Texts without U+0000/U+0001 read normally in `psql`.
///
/// ```swift
/// PostgresTextEscape.encode("a\u{0}b")  // [0x61, 0x01, 0x01, 0x62]
/// ```
enum PostgresTextEscape {
    /// The highest byte the escape rewrites: `0x00` and `0x01` are escaped, every other byte is
    /// stored as it is (``PGArrayEncoder`` checks its texts against this as it copies them).
    static let highestEscapedByte: UInt8 = 0x01

    /// The stored bytes of `text`.
    static func encode(_ text: String) -> [UInt8] {
        let utf8 = text.utf8
        guard needsEscape(utf8) else { return Array(utf8) }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(utf8.count + 8)
        for byte in utf8 {
            switch byte {
            case 0x00: bytes += [0x01, 0x01]
            case 0x01: bytes += [0x01, 0x02]
            default: bytes.append(byte)
            }
        }
        return bytes
    }

    /// Whether a text holds a byte the escape rewrites. Scans the text's bytes in place (a span),
    /// which costs a few instructions a byte, not a call of a closure per byte.
    private static func needsEscape(_ utf8: String.UTF8View) -> Bool {
        let span = utf8.span
        var index = 0
        while index < span.count {
            if span[index] <= highestEscapedByte { return true }
            index += 1
        }
        return false
    }

    /// The text of stored bytes; nil when they are not UTF-8. A `0x01` followed by another byte
    /// (written by hand) stays a literal U+0001.
    static func decode(_ bytes: [UInt8]) -> String? {
        guard bytes.contains(0x01) else { return String(validating: bytes, as: UTF8.self) }
        return decodeEscaped(bytes)
    }

    /// ``decode(_:)`` of bytes in any collection (a result's buffer): a text without escapes is
    /// made straight from them, with no intermediate copy.
    static func decode<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> String? {
        guard bytes.contains(0x01) else { return String(validating: bytes, as: UTF8.self) }
        return decodeEscaped(Array(bytes))
    }

    private static func decodeEscaped(_ bytes: [UInt8]) -> String? {
        var decoded: [UInt8] = []
        decoded.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == 0x01, index + 1 < bytes.count, bytes[index + 1] == 0x01 || bytes[index + 1] == 0x02 {
                decoded.append(bytes[index + 1] - 1)
                index += 2
            } else {
                decoded.append(byte)
                index += 1
            }
        }
        return String(validating: decoded, as: UTF8.self)
    }

    /// Whether SQL's `strpos` over escaped texts finds exactly the texts containing `needle`
    /// (false when the needle starts with U+0000…U+0002: then it gives a superset).
    static func containsIsExact(_ needle: String) -> Bool {
        guard let first = needle.utf8.first else { return true }
        return first > 0x02
    }
}
