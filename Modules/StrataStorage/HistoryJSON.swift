import Foundation

/// The JSON of history entries, written by hand for the engines' append.
///
/// `JSONEncoder` cost about 65,000 instructions per ``HistoryChange`` (its generic containers,
/// a dictionary per object, key sorting), four times what the rest of an insert costs; see
/// `Docs/Benchmarks.md`, workload 10. This writes the same JSON that `JSONEncoder` with
/// `.sortedKeys` writes (slashes unescaped), which `JSONDecoder` reads back unchanged:
///
/// ```swift
/// let bytes = try HistoryJSON.encode(changes)
/// // [{"changedProperties":["amount"],"entity":"Row","key":7,"kind":"update","tombstone":{}}]
/// ```
///
/// Tombstones (only deletes of entities with `.preserveAfterDeletion` attributes have them)
/// still go through `JSONEncoder`, so ``RecordedValue``'s encoding stays in one place.
package enum HistoryJSON {
    /// `changes` as a JSON array.
    /// - Throws: `EncodingError` when a tombstone value does not encode (as `JSONEncoder` would).
    package static func encode(_ changes: [HistoryChange]) throws -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(changes.count * 96 + 2)
        try append(changes, to: &out)
        return out
    }

    /// `transaction` as a JSON object with the keys `author` (left out when nil), `changes`,
    /// `timestamp` (seconds since 2001, `Date`'s own encoding) and `token`.
    /// - Throws: as ``encode(_:)``.
    package static func encode(_ transaction: HistoryTransaction) throws -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(transaction.changes.count * 96 + 80)
        out.append(UInt8(ascii: "{"))
        if let author = transaction.author {
            out.append(contentsOf: #""author":"#.utf8)
            appendString(author, to: &out)
            out.append(UInt8(ascii: ","))
        }
        out.append(contentsOf: #""changes":"#.utf8)
        try append(transaction.changes, to: &out)
        out.append(contentsOf: #","timestamp":"#.utf8)
        out.append(contentsOf: String(transaction.timestamp.timeIntervalSinceReferenceDate).utf8)
        out.append(contentsOf: #","token":"#.utf8)
        out.append(contentsOf: String(transaction.token).utf8)
        out.append(UInt8(ascii: "}"))
        return out
    }

    private static func append(_ changes: [HistoryChange], to out: inout [UInt8]) throws {
        out.append(UInt8(ascii: "["))
        for (index, change) in changes.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            out.append(contentsOf: #"{"changedProperties":["#.utf8)
            for (offset, name) in change.changedProperties.enumerated() {
                if offset > 0 { out.append(UInt8(ascii: ",")) }
                appendString(name, to: &out)
            }
            out.append(contentsOf: #"],"entity":"#.utf8)
            appendString(change.entity, to: &out)
            out.append(contentsOf: #","key":"#.utf8)
            out.append(contentsOf: String(change.key).utf8)
            out.append(contentsOf: #","kind":""#.utf8)
            out.append(contentsOf: change.kind.rawValue.utf8)
            out.append(contentsOf: #"","tombstone":"#.utf8)
            if change.tombstone.isEmpty {
                out.append(contentsOf: "{}".utf8)
            } else {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
                out.append(contentsOf: try encoder.encode(change.tombstone))
            }
            out.append(UInt8(ascii: "}"))
        }
        out.append(UInt8(ascii: "]"))
    }

    /// `string` as a JSON string: quotes, backslashes and control characters escaped.
    private static func appendString(_ string: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for byte in string.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out.append(contentsOf: #"\""#.utf8)
            case UInt8(ascii: "\\"): out.append(contentsOf: #"\\"#.utf8)
            case UInt8(ascii: "\n"): out.append(contentsOf: #"\n"#.utf8)
            case UInt8(ascii: "\r"): out.append(contentsOf: #"\r"#.utf8)
            case UInt8(ascii: "\t"): out.append(contentsOf: #"\t"#.utf8)
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                out.append(contentsOf: #"\u00"#.utf8)
                out.append(hex[Int(byte >> 4)])
                out.append(hex[Int(byte & 0xF)])
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}
