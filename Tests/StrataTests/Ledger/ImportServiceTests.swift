import Foundation
import Ledger
import Strata
import Synchronization
import Testing

extension LedgerTests {
    /// `ImportService` on every engine: a batch upsert keyed on external ids, the whole file or
    /// nothing.
    @Suite("ledger: import")
    struct ImportServiceTests {
        @Test(
            "300 lines import; a re-import with changed amounts updates them instead of adding",
            arguments: EngineKind.allCases)
        func importThenReimport(kind: EngineKind) async throws {
            let ledger = try LedgerFixture(kind)
            _ = try await ledger.seedChart()
            let imports = ImportService(contexts: ledger.container)
            let file = LedgerImportFile.generated(count: 300)

            let first = try await imports.importCSV(file.text, file: "march.csv")
            #expect(first == ImportSummary(lines: 300, inserted: 300, updated: 0, usedBatchUpsert: true))
            var audit = try await ledger.audit()
            #expect(audit.transactionCount == 300 && audit.isConsistent)
            #expect(try await ledger.importLineCount() == 300)
            #expect(try await ledger.balances() == LedgerFixture.chartOpenings.merging(file.sums, uniquingKeysWith: +))

            // The first 100 lines change amount, two move account, and 10 lines are new: one batch.
            var changed = file
            for index in 0..<100 { changed.rows[index].amount += changed.rows[index].amount > 0 ? 1 : -1 }
            changed.rows[1].account = "Checking"
            changed.rows[5].account = "Travel"
            // (Dated after the file's other lines: a new line on the day of a stored one of the same
            // account would take the object path, see batchOrObjects.)
            changed.rows += LedgerImportFile.generated(count: 10, idPrefix: "new-").rows.map {
                var row = $0
                row.day = "2024-05-01"
                return row
            }
            let progress = ProgressLog()
            let second = try await imports.importCSV(changed.text, file: "march-fixed.csv") { progress.append($0) }
            #expect(second == ImportSummary(lines: 310, inserted: 10, updated: 300, usedBatchUpsert: true))
            audit = try await ledger.audit()
            #expect(audit.transactionCount == 310 && audit.isConsistent)
            #expect(try await ledger.importLineCount() == 310)
            #expect(
                try await ledger.balances() == LedgerFixture.chartOpenings.merging(changed.sums, uniquingKeysWith: +))
            let reports = progress.all
            #expect(reports.first == ImportProgress(linesDone: 0, linesTotal: 310))
            #expect(reports.last == ImportProgress(linesDone: 310, linesTotal: 310))
            #expect(reports.map(\.linesDone) == reports.map(\.linesDone).sorted())

            // Each transaction keeps its latest source line.
            let context = ledger.container.newBackgroundContext()
            let source = try await context.perform {
                let found = try context.fetch(
                    FetchRequest<LedgerTransaction>(predicate: #Predicate { $0.externalID == "bank-1" }))
                return found.map { ($0.amount, $0.account?.name, $0.source?.file, $0.source?.lineNumber) }
            }
            #expect(source.count == 1)
            #expect(source.first?.0 == changed.rows[1].amount && source.first?.1 == "Checking")
            #expect(source.first?.2 == "march-fixed.csv" && source.first?.3 == 3)
        }

        @Test(
            "one batch upsert when the lines come last on their accounts, else objects; balances right both ways",
            arguments: EngineKind.allCases)
        func batchOrObjects(kind: EngineKind) async throws {
            let ledger = try LedgerFixture(kind)
            let chart = try await ledger.seedChart()
            let imports = ImportService(contexts: ledger.container)
            try await ledger.transactions.add(
                to: chart.checking.id, amount: -10_000, note: "Later", date: try LedgerDay.parse("2024-06-01"))
            func row(_ id: String, _ account: String, _ day: String, _ amount: Int64) -> LedgerImportFile.Row {
                LedgerImportFile.Row(externalID: id, account: account, day: day, amount: amount, category: "", note: id)
            }

            // Before "Later", which the file does not hold: its running balance changes.
            let early = LedgerImportFile(rows: [
                row("e-1", "Checking", "2024-03-01", 500), row("e-2", "Checking", "2024-03-02", -200),
            ])
            #expect(try await imports.importCSV(early.text, file: "early.csv").usedBatchUpsert == false)
            #expect(try await ledger.audit().isConsistent)

            // After everything: one batch. Then again with other amounts, one line moved to
            // Savings and one new on Savings: still one batch.
            var late = LedgerImportFile(rows: [
                row("l-1", "Checking", "2024-07-01", 1_000), row("l-2", "Checking", "2024-07-01", -300),
                row("l-3", "Checking", "2024-07-03", 700), row("l-4", "Savings", "2024-07-02", 50),
            ])
            #expect(try await imports.importCSV(late.text, file: "late.csv").usedBatchUpsert)
            #expect(try await ledger.audit().isConsistent)
            late.rows[0].amount = 1_100
            late.rows[1].account = "Savings"
            late.rows.append(row("l-5", "Savings", "2024-07-05", 25))
            let again = try await imports.importCSV(late.text, file: "late.csv")
            #expect(again == ImportSummary(lines: 5, inserted: 1, updated: 4, usedBatchUpsert: true))
            var audit = try await ledger.audit()
            #expect(audit.isConsistent)
            #expect(audit.line("Checking")?.notes == ["e-1", "e-2", "Later", "l-1", "l-3"])
            #expect(audit.line("Savings")?.notes == ["l-2", "l-4", "l-5"])
            let checking: Int64 = 500 - 200 - 10_000 + 1_100 + 700
            let savings: Int64 = -300 + 50 + 25
            let moved: [String: Int64] = ["Checking": checking, "Savings": savings]
            let expected = LedgerFixture.chartOpenings.merging(moved, uniquingKeysWith: +)
            #expect(try await ledger.balances() == expected)

            // A new line on the day of a stored line of the same account: their order depends on
            // keys the batch cannot know, so object by object.
            late.rows.append(row("l-6", "Checking", "2024-07-03", 5))
            #expect(try await imports.importCSV(late.text, file: "late.csv").usedBatchUpsert == false)
            audit = try await ledger.audit()
            #expect(audit.isConsistent && audit.transactionCount == 9)
        }

        @Test(
            "a bad line (amount, unknown account, duplicate id, header, fields, quotes, overdraft) changes nothing",
            arguments: EngineKind.allCases)
        func badLinesChangeNothing(kind: EngineKind) async throws {
            let ledger = try LedgerFixture(kind)
            _ = try await ledger.seedChart()
            let imports = ImportService(contexts: ledger.container)
            try await imports.importCSV(LedgerImportFile.generated(count: 20).text, file: "first.csv")
            let before = try await ledger.audit()
            let lines = try await ledger.importLineCount()

            // Line numbers count the header as line 1: row k of a file is on line k + 2.
            var file = LedgerImportFile.generated(count: 30)
            for index in 0..<30 { file.rows[index].amount *= 2 }
            func refused(_ edit: (inout [String]) -> Void) async throws -> LedgerError? {
                var text = file.text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
                edit(&text)
                do {
                    try await imports.importCSV(text.joined(separator: "\n"), file: "bad.csv")
                    return nil
                } catch let error as LedgerError {
                    return error
                }
            }

            let amount = try await refused { $0[4] = "bank-3,Checking,2024-01-04,12.345,,Too precise" }
            guard case .importLineRefused(5, .invalidAmount("12.345", _))? = amount else {
                Issue.record("wrong amount: \(String(describing: amount))")
                return
            }
            #expect(
                try await refused { $0[7] = "bank-6,Nobody,2024-01-07,1.00,,Who" }
                    == .importLineRefused(line: 8, .unknownAccount("Nobody")))
            #expect(
                try await refused { $0[10] = "bank-2,Checking,2024-01-09,1.00,,Again" }
                    == .importLineRefused(line: 11, .duplicateExternalID("bank-2", firstLine: 4)))
            #expect(
                try await refused { $0[6] = "bank-5,Checking,2024-02-30,1.00,,No such day" }
                    == .importLineRefused(line: 7, .invalidDate("2024-02-30")))
            #expect(
                try await refused { $0[2] = "bank-1,Checking,2024-01-02,0,,Nothing" }
                    == .importLineRefused(
                        line: 3, .invalidAmount("0", reason: "a transaction must move money; use a non-zero amount")))
            #expect(
                try await refused { $0[3] = "bank-2,Checking,2024-01-03,1.00,,Dinner, Paris" }
                    == .importLineRefused(line: 4, .wrongFieldCount(expected: 6, found: 7)))
            #expect(
                try await refused { $0[3] = "bank-2,Checking,2024-01-03,1.00,,\"Dinner, Paris" }
                    == .importLineRefused(line: 4, .badQuoting))
            #expect(
                try await refused { $0[3] = ",Checking,2024-01-03,1.00,," }
                    == .importLineRefused(line: 4, .missingExternalID))
            #expect(
                try await refused { $0[0] = "id,account,date,amount" }
                    == .importLineRefused(line: 1, .badHeader(found: "id,account,date,amount")))
            // Well-formed, but it would overdraw Wallet, which forbids it: refused at the balances.
            let overdraft = try await refused { $0[28] = "bank-27,Wallet,2024-01-27,-900.00,,Too much" }
            guard case .insufficientFunds(account: "Wallet", _, _, _)? = overdraft else {
                Issue.record("overdraft: \(String(describing: overdraft))")
                return
            }

            #expect(try await ledger.audit() == before)
            #expect(try await ledger.importLineCount() == lines)
            // The same file without the bad lines imports.
            try await imports.importCSV(file.text, file: "good.csv")
            #expect(try await ledger.audit().transactionCount == 30)
        }

        @Test("CSV: quotes, doubled quotes, CRLF, blank lines and line numbers")
        func parsesCSV() throws {
            let text =
                "External_ID,Account,Date,Amount,Category,Note\r\n\r\n"
                + "a-1, Checking ,2024-03-01,-12.50,,\"Dinner, \"\"La Table\"\"\"\r\n"
                + "a-2,Savings,2024-03-31,+3,income,plain note\n\n"
            let lines = try LedgerCSV.parse(text)
            #expect(lines.map(\.lineNumber) == [3, 4])
            #expect(lines.map(\.externalID) == ["a-1", "a-2"])
            #expect(lines.map(\.account) == ["Checking", "Savings"])
            #expect(lines.map(\.amount) == [-1_250, 300])
            #expect(lines.map(\.category) == [nil, "income"])
            #expect(lines.map(\.note) == ["Dinner, \"La Table\"", "plain note"])
            #expect(lines[0].text == "a-1, Checking ,2024-03-01,-12.50,,\"Dinner, \"\"La Table\"\"\"")
            #expect(lines.map { LedgerDay.format($0.date) } == ["2024-03-01", "2024-03-31"])
            #expect(try LedgerCSV.parse(LedgerCSV.header).isEmpty)
            #expect(throws: LedgerError.importLineRefused(line: 1, .badHeader(found: ""))) { try LedgerCSV.parse("") }
            #expect(throws: LedgerError.importLineRefused(line: 2, .badQuoting)) {
                try LedgerCSV.parse(LedgerCSV.header + "\na,Checking,2024-03-01,1,,\"x\"y")
            }
        }
    }
}

/// Progress reports collected from the context's queue.
final class ProgressLog: Sendable {
    private let reports = Mutex<[ImportProgress]>([])
    func append(_ progress: ImportProgress) { reports.withLock { $0.append(progress) } }
    var all: [ImportProgress] { reports.withLock { $0 } }
}
