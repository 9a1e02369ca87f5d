import Foundation
import StrataTestSupport
import Testing

@testable import Ledger

/// `LedgerCSV.parse` takes ASCII lines through a byte path and other lines through the
/// `Character` path: both must give the same lines, the same line numbers and the same errors.
@Suite("ledger CSV: the byte path and the Character path agree")
struct LedgerCSVPathsTests {
    /// What a line parses to, or the problem it is refused with.
    private static func viaParse(_ line: String) -> Result<[LedgerCSV.Line], LedgerError> {
        Result { () throws(LedgerError) in try LedgerCSV.parse(LedgerCSV.header + "\n" + line) }
    }

    /// The same line through the `Character` path alone, as `parse` reports it.
    private static func viaCharacters(_ line: String) -> Result<[LedgerCSV.Line], LedgerError> {
        if line.allSatisfy(\.isWhitespace) { return .success([]) }
        do throws(ImportLineProblem) {
            var dates: [String: Date] = [:]
            return .success([try LedgerCSV.parseLine(line, number: 2, dates: &dates)])
        } catch {
            return .failure(.importLineRefused(line: 2, error))
        }
    }

    @Test("hand-picked lines: quotes, spaces, tabs, empty and missing fields, bad amounts and dates")
    func handPicked() {
        let lines = [
            "a-1,Checking,2024-03-01,-12.50,,\"Dinner, \"\"La Table\"\"\"",
            " a-2 ,\tSavings\t, 2024-03-31 , +3 , income , spaced note ",
            "a-3,Checking,2024-03-01,1,,  \"quoted after spaces\"  ",
            "a-4,Checking,2024-03-01,1,,\"x\"y",
            "a-5,Checking,2024-03-01,1,,\"unclosed",
            "a-6,Checking,2024-03-01,1,",
            ",Checking,2024-03-01,1,,no id",
            " ,Checking,not-a-date,1,,no id and no date",
            "a-7,Checking,2024-02-30,1,,no such day",
            "a-8,Checking,2024-03-01,0,,zero",
            "a-9,Checking,2024-03-01,1.234,,three digits",
            "a-10,Checking,2024-03-01,99999999999999999,,too large",
            "a-11,Checking,2024-03-01,abc,,not a number",
            "a-12,Checking,2024-03-01,.5,,",
            "a-13,Checking,2024-03-01,5.,,",
            "a-14,\"Check\"\"ing\",2024-03-01,5,\"food, drink\",",
            "   \t  ",
            "a-15,Checking,0024-03-01,5,,old",
            "a-16,Checking,+024-03-01,5,,odd year",
            "\"a-17\",Checking,2024-03-01,-0.01,\"\",\"\"",
        ]
        for line in lines {
            #expect(Self.viaParse(line) == Self.viaCharacters(line), "\(line)")
        }
    }

    @Test("2,000 random lines from a CSV alphabet agree")
    func randomLines() {
        var generator = SeededGenerator(seed: 27)
        let pieces = [
            ",", ",", ",", ",", "\"", "\"\"", " ", "\t", "a", "b-1", "Checking", "2024-03-01", "2024-13-01", "-",
            "+", ".", "1", "12.50", "0", "x y",
        ]
        for _ in 0..<2_000 {
            let count = Int(generator.next() % 14) + 1
            let line = (0..<count).map { _ in pieces[Int(generator.next() % UInt64(pieces.count))] }.joined()
            #expect(Self.viaParse(line) == Self.viaCharacters(line), "\(line)")
        }
    }

    @Test("the lines found in the bytes are the lines Character.isNewline splits")
    func lineBreaks() {
        let texts = [
            "", "a", "a\n", "\n", "a\r\nb", "a\rb", "a\r\rb\n\r\n", "a\u{0B}b\u{0C}c", "a\u{85}b\u{2028}c\u{2029}d",
            "é\r\n\u{301}x", "a\n\u{301}", "Zürich,ä\r", "\r\n\r\n",
        ]
        for text in texts {
            let bytes = Array(text.utf8)
            let found = LedgerCSV.lineRanges(bytes).map { String(decoding: bytes[$0], as: UTF8.self) }
            let expected = text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).map(String.init)
            #expect(found == expected, "\(text.debugDescription)")
        }
    }
}
