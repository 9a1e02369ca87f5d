import Foundation

extension ObjectID {
    /// Parses a URI string produced by ``uriString`` without checking it against a schema.
    ///
    /// Package-internal: users parse with ``Strata/ObjectContext/managedObjectID(forURIRepresentation:)``,
    /// which also checks the store and entity, or decode an `ObjectID` with `Codable`.
    ///
    /// Accepted: at most 512 bytes, `strata://`, the store's UUID (8-4-4-4-12 hexadecimal digits of
    /// either case), `/`, an entity name (``EntityName/isValid(_:)``), `/`, then `p` and a positive
    /// 64-bit key or `t` and an unsigned 64-bit serial, in decimal without a leading zero. Such a
    /// URI is ASCII throughout, so the parser reads UTF-8 bytes: a service parses an ID for every
    /// object a request names, and the character-by-character reading this replaces cost about
    /// 37,000 instructions an ID (splitting on `Character`s, Foundation's UUID parser, Unicode
    /// properties per character).
    /// - Throws: ``StrataError/invalidURI(_:reason:)`` with `.malformed` when the string is not
    ///   a Strata object URI.
    package init(parsing uriString: String) throws(StrataError) {
        guard let parsed = ObjectURIText.parse(uriString) else { throw .invalidURI(uriString, reason: .malformed) }
        self.init(storeIdentifier: parsed.store, entityName: parsed.entity, kind: parsed.kind)
    }
}

/// The byte-level reading of an object URI (see ``ObjectID/init(parsing:)``).
enum ObjectURIText {
    static let scheme = Array("strata://".utf8)
    static let longest = 512
    /// The length of a UUID's text.
    static let uuidLength = 36

    /// The store, entity and key of `text`, or nil when it is not an object URI.
    static func parse(_ text: String) -> (store: UUID, entity: String, kind: ObjectID.Kind)? {
        let bytes = text.utf8.span
        let count = bytes.count
        guard count <= longest, count > scheme.count else { return nil }
        for index in scheme.indices where bytes[index] != scheme[index] { return nil }
        // The two slashes after the scheme; a third, or a non-ASCII byte, is not a URI.
        var first = -1
        var second = -1
        for index in scheme.count..<count {
            let byte = bytes[index]
            guard byte < 0x80 else { return nil }
            guard byte == UInt8(ascii: "/") else { continue }
            if first < 0 {
                first = index
            } else if second < 0 {
                second = index
            } else {
                return nil
            }
        }
        guard second >= 0 else { return nil }
        let storeRange = scheme.count..<first
        let entityRange = (first + 1)..<second
        guard let store = uuid(bytes.extracting(storeRange)),
            EntityName.isValid(bytes.extracting(entityRange)),
            let kind = key(bytes.extracting((second + 1)..<count))
        else { return nil }
        return (store, substring(text, entityRange), kind)
    }

    /// A UUID in its usual text (8-4-4-4-12 hexadecimal digits, either case), or nil.
    ///
    /// Foundation's `UUID(uuidString:)` accepts this form, and on Linux also some other 36-byte
    /// strings (a space or `\r\n` among the digits, a dash out of place) and a NUL byte with
    /// anything after it (it reads a C string): this refuses all of those.
    static func uuid(_ bytes: Span<UInt8>) -> UUID? {
        guard bytes.count == uuidLength else { return nil }
        var high: UInt64 = 0
        var low: UInt64 = 0
        var digits = 0
        for index in 0..<uuidLength {
            let byte = bytes[index]
            if index == 8 || index == 13 || index == 18 || index == 23 {
                guard byte == UInt8(ascii: "-") else { return nil }
                continue
            }
            guard let value = hexValue(byte) else { return nil }
            if digits < 16 { high = high << 4 | value } else { low = low << 4 | value }
            digits += 1
        }
        func byte(_ word: UInt64, _ shift: UInt64) -> UInt8 { UInt8(truncatingIfNeeded: word >> shift) }
        return UUID(
            uuid: (
                byte(high, 56), byte(high, 48), byte(high, 40), byte(high, 32), byte(high, 24), byte(high, 16),
                byte(high, 8), byte(high, 0), byte(low, 56), byte(low, 48), byte(low, 40), byte(low, 32),
                byte(low, 24), byte(low, 16), byte(low, 8), byte(low, 0)
            ))
    }

    /// `p` and a positive `Int64`, or `t` and a `UInt64`, in decimal digits without a leading
    /// zero (a lone `0` is allowed, and refused for `p` as not positive).
    static func key(_ bytes: Span<UInt8>) -> ObjectID.Kind? {
        guard bytes.count >= 2 else { return nil }
        if bytes.count > 2 && bytes[1] == UInt8(ascii: "0") { return nil }
        var value: UInt64 = 0
        for index in 1..<bytes.count {
            let byte = bytes[index]
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            let (times, overflowTimes) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflowSum) = times.addingReportingOverflow(UInt64(byte &- UInt8(ascii: "0")))
            guard !overflowTimes, !overflowSum else { return nil }
            value = sum
        }
        switch bytes[0] {
        case UInt8(ascii: "p"):
            guard value > 0, value <= UInt64(Int64.max) else { return nil }
            return .permanent(Int64(value))
        case UInt8(ascii: "t"):
            return .temporary(value)
        default:
            return nil
        }
    }

    private static func hexValue(_ byte: UInt8) -> UInt64? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return UInt64(byte &- UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return UInt64(byte &- UInt8(ascii: "a") &+ 10)
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return UInt64(byte &- UInt8(ascii: "A") &+ 10)
        default: return nil
        }
    }

    /// The bytes `range` of `text` (ASCII, as ``parse(_:)`` checked) as a string.
    private static func substring(_ text: String, _ range: Range<Int>) -> String {
        let utf8 = text.utf8
        let start = utf8.index(utf8.startIndex, offsetBy: range.lowerBound)
        let end = utf8.index(start, offsetBy: range.count)
        return String(Substring(utf8[start..<end]))
    }
}
