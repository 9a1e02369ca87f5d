import Foundation
import Ledger

/// `ledger import`, `ledger report` and `ledger purge`: the commands that work on many
/// transactions at once.
struct BatchCommands {
    let arguments: CLIArguments

    /// `import FILE.csv`: the whole file in one unit of work, a progress line on standard error
    /// for long files, then one summary line.
    func importFile() async throws {
        let operands = try arguments.operands(after: 1, count: 1...1, form: "import FILE.csv")
        let url = URL(fileURLWithPath: operands[0])
        let text: String
        do {
            text = try String(contentsOf: url, encoding: .utf8)
        } catch {
            throw CLIError.badInput(
                "Cannot read \(url.path) as UTF-8 text (\(error.localizedDescription)). Check the path and the file.")
        }
        let store = try LedgerStore(arguments, create: false)
        let line = ImportProgressLine()
        let summary: ImportSummary
        do {
            summary = try await ImportService(contexts: store.container).importCSV(
                text, file: url.lastPathComponent, progress: { line.report($0) })
        } catch {
            line.abandon()
            throw error
        }
        line.finish()
        let skipped = summary.skippedAsPurged == 0 ? "" : ", \(summary.skippedAsPurged) skipped (purged before)"
        print(
            """
            Imported \(url.lastPathComponent): \(summary.lines) line(s), \(summary.inserted) added, \
            \(summary.updated) updated\(skipped).
            """
        )
    }

    /// `report --month YYYY-MM`: a table of the month's sums by category and account.
    func report() async throws {
        let form = "report --month YYYY-MM"
        _ = try arguments.operands(after: 1, count: 0...0, form: form)
        let month = try LedgerMonth.parse(try arguments.required("--month", form: form))
        let store = try LedgerStore(arguments, create: false)
        let report = try await ReportService(contexts: store.container).monthly(month)
        guard !report.rows.isEmpty else {
            print("No transactions in \(month).")
            return
        }
        print("Transactions of \(month) by category and account:")
        Output.table(
            ["Category", "Account", "Txns", "Total"],
            report.rows.map {
                [$0.category ?? "-", $0.account, String($0.count), Output.money($0.total, $0.currency)]
            },
            rightAligned: [2, 3])
    }

    /// `purge --before YYYY-MM-DD`: deletes the older transactions, then shows each account's new
    /// opening balance and its unchanged balance.
    func purge() async throws {
        let form = "purge --before YYYY-MM-DD"
        _ = try arguments.operands(after: 1, count: 0...0, form: form)
        let dayText = try arguments.required("--before", form: form)
        let cutoff = try LedgerDay.parse(dayText)
        let store = try LedgerStore(arguments, create: false)
        let summary = try await PurgeService(contexts: store.container).purge(before: cutoff)
        guard summary.transactionsDeleted > 0 else {
            print("No transactions are dated before \(dayText); nothing was purged.")
            return
        }
        print(
            """
            Purged \(summary.transactionsDeleted) transaction(s) dated before \(dayText) and \
            \(summary.importLinesDeleted) import line(s) with them; balances are unchanged.
            """
        )
        let currencies = Dictionary(
            try await store.accounts.list().map { ($0.name, $0.currency) }, uniquingKeysWith: { first, _ in first })
        Output.table(
            ["Account", "Purged", "Moved to opening", "Opening", "Balance"],
            summary.accounts.map {
                let currency = currencies[$0.account] ?? ""
                return [
                    $0.account, String($0.transactionsDeleted), Output.money($0.movedToOpeningBalance, currency),
                    Output.money($0.openingBalance, currency), Output.money($0.balance, currency),
                ]
            },
            rightAligned: [1, 2, 3, 4])
    }
}
