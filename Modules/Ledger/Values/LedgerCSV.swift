public import Foundation

/// The import file format of `ledger import`: CSV with a header line and six columns,
/// `external_id,account,date,amount,category,note`.
///
/// - `external_id`: the transaction's id in the source system (required, unique in the file):
///   importing a line whose id the ledger already has updates that transaction.
/// - `account`: an existing account's exact name.
/// - `date`: `YYYY-MM-DD` (UTC).
/// - `amount`: signed decimal, at most two digits after the point, not zero (`-12.50`).
/// - `category`: optional; empty means the one the note suggests, if any.
/// - `note`: optional free text.
///
/// Fields may be quoted with `"` (a quote inside is written `""`), so they can hold commas;
/// a field cannot span lines. Blank lines are skipped; `\r\n` line endings are accepted. Line
/// numbers count from 1, the header included.
///
/// ```swift
/// let text = """
///     external_id,account,date,amount,category,note
///     bank-1,Checking,2024-03-01,-1200.00,housing,Rent
///     bank-2,Checking,2024-03-02,-4.50,,"Coffee, to go"
///     """
/// let lines = try LedgerCSV.parse(text)
/// print(lines[1].note, lines[1].lineNumber)     // Coffee, to go 3
/// ```
public enum LedgerCSV {
    /// The header line.
    public static let header = "external_id,account,date,amount,category,note"

    /// The columns, in order.
    static let columns = header.split(separator: ",").map(String.init)

    /// One parsed, checked line of an import file.
    public struct Line: Sendable, Hashable {
        /// The line's number in the file (the header is line 1).
        public var lineNumber: Int
        /// The id in the source system.
        public var externalID: String
        /// The account's name.
        public var account: String
        /// Midnight UTC of the line's day.
        public var date: Date
        /// Signed minor units, not zero.
        public var amount: Int64
        /// The category; nil when the column is empty.
        public var category: String?
        /// The note (may be empty).
        public var note: String
        /// The line as read, without its line ending.
        public var text: String
    }

    /// Parses and checks a whole file: the header, every line's fields, and that no external id
    /// appears twice. Accounts are checked by the import, against the store.
    /// - Throws: ``LedgerError/importLineRefused(line:_:)`` for the first bad line.
    public static func parse(_ text: String) throws(LedgerError) -> [Line] {
        var lines: [Line] = []
        var firstLineOfID: [String: Int] = [:]
        var dates: [String: Date] = [:]
        var sawHeader = false
        let bytes = Array(text.utf8)
        for (index, range) in lineRanges(bytes).enumerated() {
            let number = index + 1
            let raw = bytes[range]
            // Lines of ASCII bytes take the byte path (LedgerCSV+Bytes.swift); others the
            // `Character` one, which gives the same results on ASCII.
            let text = raw.allSatisfy { $0 < 0x80 } ? nil : String(decoding: raw, as: UTF8.self)
            let isBlank = text.map { $0.allSatisfy(\.isWhitespace) } ?? raw.allSatisfy(isSpaceOrTab)
            if isBlank { continue }
            guard sawHeader else {
                let found = (text ?? String(decoding: raw, as: UTF8.self)).trimmingCharacters(in: .whitespaces)
                guard found.lowercased() == header else {
                    throw .importLineRefused(line: number, .badHeader(found: found))
                }
                sawHeader = true
                continue
            }
            let parsed: Line
            do {
                if let text {
                    parsed = try parseLine(text, number: number, dates: &dates)
                } else {
                    parsed = try parseASCIILine(raw, number: number, dates: &dates)
                }
            } catch {
                throw .importLineRefused(line: number, error)
            }
            if let first = firstLineOfID[parsed.externalID] {
                throw .importLineRefused(line: number, .duplicateExternalID(parsed.externalID, firstLine: first))
            }
            firstLineOfID[parsed.externalID] = number
            lines.append(parsed)
        }
        guard sawHeader else { throw .importLineRefused(line: 1, .badHeader(found: "")) }
        return lines
    }

    /// One data line's fields, checked; `dates` keeps the days already parsed.
    static func parseLine(_ text: String, number: Int, dates: inout [String: Date]) throws(ImportLineProblem) -> Line {
        let fields = try splitFields(text)
        guard fields.count == columns.count else {
            throw .wrongFieldCount(expected: columns.count, found: fields.count)
        }
        let externalID = fields[0].trimmingCharacters(in: .whitespaces)
        guard !externalID.isEmpty else { throw .missingExternalID }
        let date = try day(fields[2].trimmingCharacters(in: .whitespaces), dates: &dates)
        return try line(
            number: number, externalID: externalID, account: fields[1].trimmingCharacters(in: .whitespaces), date: date,
            amountText: fields[3].trimmingCharacters(in: .whitespaces),
            category: fields[4].trimmingCharacters(in: .whitespaces), note: fields[5], text: text)
    }

    /// The day `text` names, parsed once per distinct text (a statement has a few dozen) and
    /// kept in `dates`.
    static func day(_ text: String, dates: inout [String: Date]) throws(ImportLineProblem) -> Date {
        if let known = dates[text] { return known }
        do {
            let date = try LedgerDay.parse(text)
            dates[text] = date
            return date
        } catch {
            throw .invalidDate(text)
        }
    }

    /// A line from its fields, trimmed (but the note), its external id checked and its date
    /// parsed (in that order, as both paths check them): checks the amount.
    static func line(
        number: Int, externalID: String, account: String, date: Date, amountText: String, category: String,
        note: String, text: String
    ) throws(ImportLineProblem) -> Line {
        let amount: Int64
        do {
            amount = try MinorUnits.parse(amountText)
        } catch {
            if case .invalidAmount(_, let reason) = error { throw .invalidAmount(amountText, reason: reason) }
            throw .invalidAmount(amountText, reason: "write it as a decimal number such as 12.50 or -3")
        }
        guard amount != 0 else {
            throw .invalidAmount(amountText, reason: "a transaction must move money; use a non-zero amount")
        }
        return Line(
            lineNumber: number, externalID: externalID, account: account, date: date, amount: amount,
            category: category.isEmpty ? nil : category, note: note, text: text)
    }

    /// The fields of one line: comma-separated, each optionally quoted.
    /// - Throws: ``ImportLineProblem/badQuoting`` for an unclosed quote or text after one.
    static func splitFields(_ line: String) throws(ImportLineProblem) -> [String] {
        var fields: [String] = []
        var current = ""
        var characters = line[...]
        var quoted = false
        var closedQuote = false
        while let character = characters.popFirst() {
            if quoted {
                if character == "\"" {
                    if characters.first == "\"" {
                        characters.removeFirst()
                        current.append("\"")
                    } else {
                        quoted = false
                        closedQuote = true
                    }
                } else {
                    current.append(character)
                }
            } else if character == "," {
                fields.append(current)
                current = ""
                closedQuote = false
            } else if character == "\"" && current.allSatisfy(\.isWhitespace) && !closedQuote {
                current = ""
                quoted = true
            } else if closedQuote && !character.isWhitespace {
                throw .badQuoting
            } else if !closedQuote {
                current.append(character)
            }
        }
        guard !quoted else { throw .badQuoting }
        fields.append(current)
        return fields
    }
}
