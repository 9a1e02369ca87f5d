import Foundation
import Ledger
import Strata
import Testing

extension LedgerTests {
    /// `ReportService` and `PurgeService` on every engine.
    @Suite("ledger: monthly report and purge")
    struct ReportPurgeServiceTests {
        /// Eleven lines: eight in March 2024 (two on its first and last days), one just before,
        /// two just after.
        static let file = LedgerImportFile(
            rows: [
                row("f-1", "Checking", "2024-02-29", -5_000, "dining", ""),
                row("m-1", "Checking", "2024-03-01", -120_000, "housing", "Rent"),
                row("m-2", "Checking", "2024-03-03", -450, "dining", "Coffee"),
                row("m-3", "Checking", "2024-03-09", -2_550, "dining", "Lunch"),
                row("m-4", "Wallet", "2024-03-10", -1_000, "dining", "Tea"),
                row("m-5", "Savings", "2024-03-15", 250_000, "income", "Salary"),
                row("m-6", "Checking", "2024-03-20", 7_500, "", "Refund"),
                row("m-7", "Checking", "2024-03-21", -1_234, "", "Misc"),
                row("m-8", "Travel", "2024-03-31", -9_900, "travel", "Train"),
                row("a-1", "Checking", "2024-04-01", -777, "dining", ""),
                row("a-2", "Savings", "2024-04-02", 1, "income", ""),
            ])

        static func row(
            _ id: String, _ account: String, _ day: String, _ amount: Int64, _ category: String, _ note: String
        ) -> LedgerImportFile.Row {
            LedgerImportFile.Row(
                externalID: id, account: account, day: day, amount: amount, category: category, note: note)
        }

        @Test("a month's sums by category and account match the hand-computed ones", arguments: EngineKind.allCases)
        func monthlyReport(kind: EngineKind) async throws {
            let ledger = try LedgerFixture(kind)
            _ = try await ledger.seedChart()
            try await ImportService(contexts: ledger.container).importCSV(Self.file.text, file: "2024.csv")
            let reports = ReportService(contexts: ledger.container)

            let march = try await reports.monthly(try LedgerMonth.parse("2024-03"))
            // "Refund" suggests "income" (empty category: the note's); "Misc" suggests none.
            #expect(
                march.rows == [
                    .init(category: "dining", account: "Checking", currency: "USD", count: 2, total: -3_000),
                    .init(category: "dining", account: "Wallet", currency: "USD", count: 1, total: -1_000),
                    .init(category: "housing", account: "Checking", currency: "USD", count: 1, total: -120_000),
                    .init(category: "income", account: "Checking", currency: "USD", count: 1, total: 7_500),
                    .init(category: "income", account: "Savings", currency: "USD", count: 1, total: 250_000),
                    .init(category: "travel", account: "Travel", currency: "EUR", count: 1, total: -9_900),
                    .init(category: nil, account: "Checking", currency: "USD", count: 1, total: -1_234),
                ])
            #expect(march.month.description == "2024-03")
            let april = try await reports.monthly(try LedgerMonth.parse("2024-04"))
            #expect(april.rows.map(\.total) == [-777, 1])
            #expect(try await reports.monthly(try LedgerMonth.parse("1999-12")).rows.isEmpty)
            // The last month a date can be written in (before, it ended at Date.distantFuture,
            // in 4001, before it began, and reported nothing).
            let last = LedgerImportFile(rows: [
                Self.row("z-1", "Checking", "9999-12-01", -5, "dining", ""),
                Self.row("z-2", "Checking", "9999-12-31", -7, "dining", ""),
            ])
            try await ImportService(contexts: ledger.container).importCSV(last.text, file: "9999.csv")
            #expect(try await reports.monthly(try LedgerMonth.parse("9999-12")).rows.map(\.total) == [-12])
            for text in ["2024-3", "2024-13", "24-03", "2024-03-01", ""] {
                #expect(throws: LedgerError.self) { try LedgerMonth.parse(text) }
            }
        }

        @Test(
            "purge deletes the old rows and their import lines, keeps every balance and the invariant",
            arguments: EngineKind.allCases)
        func purgeKeepsBalances(kind: EngineKind) async throws {
            let ledger = try LedgerFixture(kind)
            let chart = try await ledger.seedChart()
            try await ImportService(contexts: ledger.container).importCSV(Self.file.text, file: "2024.csv")
            // Made in the ledger (no import line): one old, one new, and an old transfer.
            let day = { (text: String) in try LedgerDay.parse(text) }
            try await ledger.transactions.add(
                to: chart.savings.id, amount: 4_200, note: "Old deposit", date: try day("2024-01-15"))
            try await ledger.transactions.add(
                to: chart.savings.id, amount: -200, note: "New fee", date: try day("2024-03-16"))
            try await ledger.transactions.transfer(
                from: chart.checking.id, to: chart.wallet.id, amount: 1_000, note: "Cash")
            let balances = try await ledger.balances()
            let before = try await ledger.audit()
            #expect(before.isConsistent && before.transactionCount == 15)

            // Nothing is that old: nothing changes.
            let none = try await PurgeService(contexts: ledger.container).purge(before: try day("2023-12-31"))
            #expect(none.transactionsDeleted == 0 && none.importLinesDeleted == 0 && none.accounts.isEmpty)
            #expect(try await ledger.audit() == before)

            // Before 2024-03-10: f-1, m-1, m-2, m-3 (imported) and the old deposit.
            let summary = try await PurgeService(contexts: ledger.container).purge(before: try day("2024-03-10"))
            #expect(summary.transactionsDeleted == 5 && summary.importLinesDeleted == 4)
            #expect(
                summary.accounts == [
                    .init(
                        account: "Checking", transactionsDeleted: 4, movedToOpeningBalance: -128_000,
                        openingBalance: 100_000 - 128_000, balance: balances["Checking"] ?? 0),
                    .init(
                        account: "Savings", transactionsDeleted: 1, movedToOpeningBalance: 4_200, openingBalance: 4_200,
                        balance: balances["Savings"] ?? 0),
                ])
            let after = try await ledger.audit()
            #expect(after.isConsistent)
            #expect(try await ledger.balances() == balances)
            #expect(after.transactionCount == 10)
            #expect(try await ledger.importLineCount() == Self.file.rows.count - 4)
            let context = ledger.container.newBackgroundContext()
            let (oldest, purgedIDs) = try await context.perform {
                let remaining = try context.fetch(FetchRequest<LedgerTransaction>())
                let gone = try context.count(
                    for: FetchRequest<LedgerTransaction>(
                        predicate: #Predicate { ["f-1", "m-1", "m-2", "m-3"].contains($0.externalID) }))
                return (remaining.map(\.date).min(), gone)
            }
            #expect(try oldest.map { $0 >= (try day("2024-03-10")) } == true)
            #expect(purgedIDs == 0)
            #expect(after.line("Checking")?.notes.contains("Cash") == true)

            // The same cut-off again finds nothing left.
            let again = try await PurgeService(contexts: ledger.container).purge(before: try day("2024-03-10"))
            #expect(again.transactionsDeleted == 0)
            #expect(try await ledger.audit() == after)
        }

        @Test(
            "importing the same file after a purge skips the purged lines: no amount counts twice",
            arguments: EngineKind.allCases)
        func reimportAfterPurge(kind: EngineKind) async throws {
            let ledger = try LedgerFixture(kind)
            _ = try await ledger.seedChart()
            let imports = ImportService(contexts: ledger.container)
            try await imports.importCSV(Self.file.text, file: "2024.csv")
            let balances = try await ledger.balances()
            try await PurgeService(contexts: ledger.container).purge(before: try LedgerDay.parse("2024-03-10"))
            let purged = try await ledger.audit()

            // The statement again: f-1, m-1, m-2 and m-3 were purged; the other seven update.
            let summary = try await imports.importCSV(Self.file.text, file: "2024.csv")
            #expect(summary.lines == 11 && summary.skippedAsPurged == 4)
            #expect(summary.inserted == 0 && summary.updated == 7)
            #expect(try await ledger.balances() == balances)
            #expect(try await ledger.audit() == purged)

            // A purged line that now says another amount refuses the file, naming the line and
            // what was purged: nothing is written.
            let changed = LedgerImportFile(rows: [
                Self.row("n-1", "Checking", "2024-03-02", -100, "dining", "Gum"),
                Self.row("m-1", "Checking", "2024-03-01", -99_999, "housing", "Rent, corrected"),
            ])
            let error = await #expect(throws: LedgerError.self) {
                try await imports.importCSV(changed.text, file: "changed.csv")
            }
            guard case .importLineRefused(let line, .changedAfterPurge(let id, let was))? = error else {
                Issue.record("expected changedAfterPurge, got \(String(describing: error))")
                return
            }
            #expect(line == 3 && id == "m-1" && was.contains("Checking") && was.contains("2024-03-01"), "\(was)")
            #expect(try await ledger.balances() == balances)

            // The same purged line unchanged, beside a new line dated before the cut-off: the purged
            // one is skipped, the new one is added (on the object path) and counts once.
            let later = LedgerImportFile(rows: [Self.file.rows[1], changed.rows[0]])
            let second = try await imports.importCSV(later.text, file: "later.csv")
            #expect(second.skippedAsPurged == 1 && second.inserted == 1 && !second.usedBatchUpsert)
            var expected = balances
            expected["Checking"]! -= 100
            #expect(try await ledger.balances() == expected)
            #expect(try await ledger.audit().isConsistent)

            // Every line purged: nothing to write, nothing changes.
            let onlyPurged = LedgerImportFile(rows: [Self.file.rows[0]])
            let third = try await imports.importCSV(onlyPurged.text, file: "old.csv")
            #expect(third.lines == 1 && third.skippedAsPurged == 1 && third.inserted + third.updated == 0)
            #expect(try await ledger.balances() == expected)
        }
    }
}
