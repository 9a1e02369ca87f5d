import Foundation
import Ledger
import Strata
import Testing

extension LedgerTests {
    /// Amounts that add up to more than 64 bits hold, although every balance fits: the report,
    /// the purge and the import refuse them with a `LedgerError` that names the row, the account
    /// or the line, and write nothing. On every engine.
    @Suite("ledger: sums past 64 bits")
    struct SumOutOfRangeTests {
        static let largest = Int64.max

        static func day(_ text: String) throws -> Date { try LedgerDay.parse(text) }

        /// The chart, and Big: opened at minus the largest amount, then two deposits of the largest
        /// amount in March 2024 (category "income"), which sum to 2 × max, and two withdrawals of
        /// it in April without a category (the note suggests none): its balances are -max, 0,
        /// max, 0 and -max, each of which fits. Checking has a small transaction in each of March, April
        /// and May, in a group the aggregate lists before Big's in March.
        static func seed(_ ledger: LedgerFixture) async throws -> AccountSnapshot {
            let chart = try await ledger.seedChart()
            let big = try await ledger.accounts.create(name: "Big", currency: "USD", openingBalance: -largest)
            for (amount, text, note, category) in [
                (largest, "2024-03-01", "Windfall", "income"), (largest, "2024-03-02", "Windfall", "income"),
                (-largest, "2024-04-01", "Misc", nil), (-largest, "2024-04-02", "Misc", nil),
            ] as [(Int64, String, String, String?)] {
                try await ledger.transactions.add(
                    to: big.id, amount: amount, note: note, category: category, date: try Self.day(text))
            }
            for text in ["2024-03-05", "2024-04-05", "2024-05-05"] {
                try await ledger.transactions.add(
                    to: chart.checking.id, amount: -450, note: "Coffee", category: "income", date: try Self.day(text))
            }
            return big
        }

        @Test("a month whose row sums past 64 bits gets reportSumOutOfRange naming it", arguments: EngineKind.allCases)
        func report(kind: EngineKind) async throws {
            let ledger = try LedgerFixture(kind)
            _ = try await Self.seed(ledger)
            let reports = ReportService(contexts: ledger.container)
            let march = try LedgerMonth.parse("2024-03")
            let error = await #expect(throws: LedgerError.self) { try await reports.monthly(march) }
            #expect(error == .reportSumOutOfRange(month: march, account: "Big", category: "income"))
            #expect(
                error?.description
                    == "The 2024-03 transactions of Big in the category \"income\" add up to more than the ledger "
                    + "can hold (at most 92233720368547758.07 either way), so the month cannot be reported. Look for "
                    + "a wrongly entered amount among them (ledger history Big) and correct it.")
            // The rows without a category are found as well (a predicate on a nil category).
            let april = try LedgerMonth.parse("2024-04")
            let second = await #expect(throws: LedgerError.self) { try await reports.monthly(april) }
            #expect(second == .reportSumOutOfRange(month: april, account: "Big", category: nil))
            #expect(
                second?.description.contains("of Big without a category add up") == true,
                "\(String(describing: second))")
            // A month whose rows fit is reported as before.
            let may = try await reports.monthly(try LedgerMonth.parse("2024-05"))
            #expect(
                may.rows == [.init(category: "income", account: "Checking", currency: "USD", count: 1, total: -450)])
        }

        @Test(
            "a purge moving amounts that sum past 64 bits gets purgeSumOutOfRange, writes nothing; in steps it works",
            arguments: EngineKind.allCases)
        func purge(kind: EngineKind) async throws {
            let ledger = try LedgerFixture(kind)
            _ = try await Self.seed(ledger)
            let purges = PurgeService(contexts: ledger.container)
            let before = try await ledger.audit()
            let balances = try await ledger.balances()
            #expect(before.isConsistent && balances["Big"] == -Self.largest)

            let cutoff = try Self.day("2024-03-31")
            let error = await #expect(throws: LedgerError.self) { try await purges.purge(before: cutoff) }
            #expect(error == .purgeSumOutOfRange(account: "Big", before: cutoff))
            #expect(
                error?.description
                    == "The transactions of Big dated before 2024-03-31 add up to more than the ledger can hold "
                    + "(at most 92233720368547758.07 either way), so they cannot be moved into its opening balance "
                    + "at once. Nothing was purged; purge up to an earlier day first, then up to this one.")
            #expect(try await ledger.audit() == before)
            #expect(try await ledger.accounts.list().first { $0.name == "Big" }?.openingBalance == -Self.largest)

            // What the message says to do: an earlier day first, then this one.
            let first = try await purges.purge(before: try Self.day("2024-03-02"))
            #expect(first.accounts.first { $0.account == "Big" }?.openingBalance == 0)
            let second = try await purges.purge(before: cutoff)
            let expected: [PurgeSummary.AccountLine] = [
                .init(
                    account: "Big", transactionsDeleted: 1, movedToOpeningBalance: Self.largest,
                    openingBalance: Self.largest, balance: -Self.largest),
                .init(
                    account: "Checking", transactionsDeleted: 1, movedToOpeningBalance: -450, openingBalance: 99_550,
                    balance: 98_650),
            ]
            #expect(second.accounts == expected)
            let after = try await ledger.audit()
            #expect(after.isConsistent && after.transactionCount == before.transactionCount - 3)
            #expect(try await ledger.balances() == balances)
        }

        @Test(
            "an import line that takes a balance past 64 bits is refused by its number; nothing is written",
            arguments: EngineKind.allCases)
        func importLine(kind: EngineKind) async throws {
            let ledger = try LedgerFixture(kind)
            let chart = try await ledger.seedChart()
            _ = try await ledger.accounts.create(name: "Vault", currency: "USD", openingBalance: Self.largest - 10_000)
            // A stored Savings transaction dated after the file's Savings line, near the largest.
            try await ledger.transactions.add(
                to: chart.savings.id, amount: Self.largest - 1_000, note: "Estate", date: try Self.day("2024-06-01"))
            let imports = ImportService(contexts: ledger.container)
            let before = try await ledger.audit()
            let lines = try await ledger.importLineCount()
            func refusal(_ rows: [LedgerImportFile.Row]) async -> (line: Int, amount: String, reason: String)? {
                let error = await #expect(throws: LedgerError.self) {
                    try await imports.importCSV(LedgerImportFile(rows: rows).text, file: "big.csv")
                }
                guard case .importLineRefused(let line, .invalidAmount(let amount, let reason))? = error else {
                    Issue.record("expected an invalid amount on a line, got \(String(describing: error))")
                    return nil
                }
                return (line, amount, reason)
            }

            // Line 3's amount takes Vault's balance past the largest (the batch path's plan gives
            // up on it, the object path names the line).
            let vault = await refusal([
                ReportPurgeServiceTests.row("v-1", "Vault", "2024-05-01", -5_000, "", "Fee"),
                ReportPurgeServiceTests.row("v-2", "Vault", "2024-05-02", 20_000, "", "Interest"),
                ReportPurgeServiceTests.row("v-3", "Checking", "2024-05-03", 100, "", "Gift"),
            ])
            #expect(vault?.line == 3 && vault?.amount == "200.00", "\(String(describing: vault))")
            #expect(
                vault?.reason
                    == "with it, the balance of Vault would go past what a ledger can hold (at most "
                    + "92233720368547758.07 either way); correct the amount or split it across accounts")
            // The Savings line is dated before a stored transaction, whose running balance then
            // passes the largest: the line is named (the last one added before it passed).
            let savings = await refusal([
                ReportPurgeServiceTests.row("s-0", "Checking", "2024-01-01", 100, "", "Gift"),
                ReportPurgeServiceTests.row("s-1", "Savings", "2024-01-02", 2_000, "", "Bonus"),
            ])
            #expect(savings?.line == 3 && savings?.amount == "20.00", "\(String(describing: savings))")
            #expect(savings?.reason.contains("the balance of Savings would go past") == true)
            // An amount past 64 bits itself: refused when the file is read, by its line too.
            let header = LedgerCSV.header
            let error = await #expect(throws: LedgerError.self) {
                try await imports.importCSV(
                    "\(header)\nx-1,Checking,2024-05-01,1.00,,\nx-2,Checking,2024-05-02,92233720368547758.08,,\n",
                    file: "huge.csv")
            }
            #expect(
                error == .importLineRefused(line: 3, .invalidAmount("92233720368547758.08", reason: "it is too large")))

            #expect(try await ledger.audit() == before)
            #expect(try await ledger.importLineCount() == lines)
        }
    }
}
