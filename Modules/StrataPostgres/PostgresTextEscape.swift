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
        bytes.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            switch byte {
            case 0x00: bytes += [0x01, 0x01]
            case 0x01: bytes += [0x01, 0x02]
            default: bytes.append(byte)
            }
        }
        return bytes
    }

    /// The text of stored bytes; nil when they are not UTF-8. A `0x01` followed by another byte
    /// (written by hand) stays a literal U+0001.
    static func decode(_ bytes: [UInt8]) -> String? {
        guard bytes.contains(0x01) else { return String(validating: bytes, as: UTF8.self) }
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
