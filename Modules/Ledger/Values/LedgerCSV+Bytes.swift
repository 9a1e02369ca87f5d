import Foundation

/// The fast path of ``LedgerCSV/parse(_:)``: the file's lines found in its UTF-8 bytes, and a
/// line of ASCII bytes (every line of a usual bank export) split and checked byte by byte, with
/// the same results as the `Character` path, which still parses any line with other bytes.
///
/// Why it is the same: the line breaks `Character.isNewline` finds are exactly the scalars
/// LF, VT, FF, CR, NEL, LS and PS, with CR LF as one (a grapheme never joins across them); inside
/// an ASCII line the only whitespace `Character.isWhitespace` and `CharacterSet.whitespaces`
/// know is space and tab; and the comma and the quote are single bytes in UTF-8.
extension LedgerCSV {
    /// The byte ranges of `bytes`' lines, without their line breaks, as splitting the text on
    /// `Character.isNewline` gives them (an empty last line when the text ends with a break).
    static func lineRanges(_ bytes: [UInt8]) -> [Range<Int>] {
        var ranges: [Range<Int>] = []
        var start = 0
        var index = 0
        let count = bytes.count
        while index < count {
            let byte = bytes[index]
            var breakLength = 0
            switch byte {
            case 0x0A, 0x0B, 0x0C:
                breakLength = 1
            case 0x0D:
                breakLength = index + 1 < count && bytes[index + 1] == 0x0A ? 2 : 1
            case 0xC2 where index + 1 < count && bytes[index + 1] == 0x85:
                breakLength = 2
            case 0xE2 where index + 2 < count && bytes[index + 1] == 0x80 && (bytes[index + 2] & 0xFE) == 0xA8:
                breakLength = 3
            default:
                break
            }
            if breakLength > 0 {
                ranges.append(start..<index)
                index += breakLength
                start = index
            } else {
                index += 1
            }
        }
        ranges.append(start..<count)
        return ranges
    }

    /// One data line of ASCII bytes, checked as ``parseLine(_:number:)`` checks it; `dates`
    /// keeps the days already parsed (a statement has a few dozen).
    static func parseASCIILine(
        _ bytes: ArraySlice<UInt8>, number: Int, dates: inout [String: Date]
    ) throws(ImportLineProblem) -> Line {
        let fields = try splitASCIIFields(bytes)
        guard fields.count == columns.count else {
            throw .wrongFieldCount(expected: columns.count, found: fields.count)
        }
        let externalID = text(fields[0], trimmed: true)
        guard !externalID.isEmpty else { throw .missingExternalID }
        let date = try day(text(fields[2], trimmed: true), dates: &dates)
        return try line(
            number: number, externalID: externalID, account: text(fields[1], trimmed: true),
            date: date, amountText: text(fields[3], trimmed: true), category: text(fields[4], trimmed: true),
            note: text(fields[5], trimmed: false), text: String(decoding: bytes, as: UTF8.self))
    }

    /// The fields of an ASCII line, as ``splitFields(_:)`` splits them.
    /// - Throws: ``ImportLineProblem/badQuoting`` for an unclosed quote or text after one.
    static func splitASCIIFields(_ bytes: ArraySlice<UInt8>) throws(ImportLineProblem) -> [[UInt8]] {
        let quote = UInt8(ascii: "\"")
        let comma = UInt8(ascii: ",")
        var fields: [[UInt8]] = []
        fields.reserveCapacity(columns.count)
        var current: [UInt8] = []
        var quoted = false
        var closedQuote = false
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            index += 1
            if quoted {
                if byte == quote {
                    if index < bytes.endIndex && bytes[index] == quote {
                        index += 1
                        current.append(quote)
                    } else {
                        quoted = false
                        closedQuote = true
                    }
                } else {
                    current.append(byte)
                }
            } else if byte == comma {
                fields.append(current)
                current.removeAll(keepingCapacity: true)
                closedQuote = false
            } else if byte == quote && current.allSatisfy(isSpaceOrTab) && !closedQuote {
                current.removeAll(keepingCapacity: true)
                quoted = true
            } else if closedQuote && !isSpaceOrTab(byte) {
                throw .badQuoting
            } else if !closedQuote {
                current.append(byte)
            }
        }
        guard !quoted else { throw .badQuoting }
        fields.append(current)
        return fields
    }

    /// Whether an ASCII byte is whitespace inside a line: a space or a tab.
    static func isSpaceOrTab(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09
    }

    /// The text of a field, without its leading and trailing spaces and tabs when `trimmed`.
    private static func text(_ field: [UInt8], trimmed: Bool) -> String {
        guard trimmed else { return String(decoding: field, as: UTF8.self) }
        guard let first = field.firstIndex(where: { !isSpaceOrTab($0) }),
            let last = field.lastIndex(where: { !isSpaceOrTab($0) })
        else { return "" }
        return String(decoding: field[first...last], as: UTF8.self)
    }
}
