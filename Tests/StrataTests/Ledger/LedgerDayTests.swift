import Foundation
import Ledger
import Testing

/// Days and months are written with ASCII digits only: `Int` alone would read `+024` as 24.
@Suite("ledger days and months: digits only")
struct LedgerDayTests {
    @Test("signs and other non-digits are refused; plain days and months parse")
    func digitsOnly() throws {
        for text in ["+024-02-03", "2024-+3-01", "2024-03-+1", "2024-03- 1", "２０２４-03-01"] {
            #expect(throws: LedgerError.self, "\(text)") { try LedgerDay.parse(text) }
        }
        for text in ["+024-02", "2024-+3", "2024- 3"] {
            #expect(throws: LedgerError.self, "\(text)") { try LedgerMonth.parse(text) }
        }
        #expect(LedgerDay.format(try LedgerDay.parse("0024-02-03")) == "0024-02-03")
        #expect(LedgerDay.format(try LedgerDay.parse("2024-02-29")) == "2024-02-29")
        #expect(try LedgerMonth.parse("2024-03").month == 3)
    }
}
