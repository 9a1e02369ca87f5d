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
    /// The stored bytes of `text`.
    static func encode(_ text: String) -> [UInt8] {
        var bytes: [UInt8] = []
        encode(text, appendingTo: &bytes)
        return bytes
    }

    /// Appends the stored bytes of `text` to `bytes`, without an intermediate copy (a large text
    /// is written once, straight into the buffer sent to the server).
    static func encode(_ text: String, appendingTo bytes: inout [UInt8]) {
        let utf8 = text.utf8
        // Room for the whole text at once (doubling, so many small texts stay linear).
        let needed = bytes.count + utf8.count
        if needed > bytes.capacity { bytes.reserveCapacity(max(needed, bytes.capacity * 2)) }
        if !needsEscape(utf8) {
            bytes.append(contentsOf: utf8)
            return
        }
        for byte in utf8 {
            switch byte {
            case 0x00: bytes += [0x01, 0x01]
            case 0x01: bytes += [0x01, 0x02]
            default: bytes.append(byte)
            }
        }
    }

    /// Whether a text holds a byte the escape rewrites (0x00 or 0x01). Scans the text's bytes in
    /// place (a span), which costs a few instructions a byte, not a call of a closure per byte.
    private static func needsEscape(_ utf8: String.UTF8View) -> Bool {
        let span = utf8.span
        var index = 0
        while index < span.count {
            if span[index] <= 0x01 { return true }
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
