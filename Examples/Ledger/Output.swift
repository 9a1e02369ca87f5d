import Foundation
import Ledger
import Strata

/// Plain-text tables and amounts for the terminal.
enum Output {
    /// `1234567` in `USD` → `"12,345.67 USD"`, right-aligned by the caller.
    static func money(_ minorUnits: Int64, _ currency: String) -> String {
        let plain = MinorUnits.format(minorUnits)
        let negative = plain.hasPrefix("-")
        let digits = plain.dropFirst(negative ? 1 : 0)
        let parts = digits.split(separator: ".")
        var whole = String(parts[0])
        var grouped = ""
        while whole.count > 3 {
            grouped = "," + whole.suffix(3) + grouped
            whole.removeLast(3)
        }
        return "\(negative ? "-" : "")\(whole)\(grouped).\(parts[1]) \(currency)"
    }

    /// `yyyy-MM-dd` in UTC.
    static func day(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withFullDate]
        return formatter.string(from: date)
    }

    /// Prints rows as columns; `rightAligned` names the columns to align right.
    static func table(_ header: [String], _ rows: [[String]], rightAligned: Set<Int> = []) {
        let all = [header] + rows
        let widths = header.indices.map { column in all.map { $0[column].count }.max() ?? 0 }
        func line(_ cells: [String]) -> String {
            cells.enumerated().map { column, cell in
                let pad = String(repeating: " ", count: widths[column] - cell.count)
                return rightAligned.contains(column) ? pad + cell : cell + pad
            }.joined(separator: "  ").trimmingTrailingSpaces
        }
        print(line(header))
        print(line(widths.map { String(repeating: "-", count: $0) }))
        rows.forEach { print(line($0)) }
    }

    static func accounts(_ accounts: [AccountSnapshot], withURIs: Bool = true) {
        table(
            ["Account", "Balance", "Opening", "Txns", "Overdraft"] + (withURIs ? ["URI"] : []),
            accounts.map {
                [
                    $0.name, money($0.balance, $0.currency), money($0.openingBalance, $0.currency),
                    String($0.transactionCount),
                    $0.allowsOverdraft ? "yes" : "no",
                ] + (withURIs ? [$0.id] : [])
            },
            rightAligned: [1, 2, 3])
    }

    static func history(_ records: [TransactionRecord], currency: String) {
        table(
            ["Date", "Note", "Category", "Amount", "Balance after", "URI"],
            records.map {
                [
                    day($0.date), $0.note, $0.category ?? "-", money($0.amount, currency),
                    money($0.runningBalance, currency), $0.id,
                ]
            },
            rightAligned: [3, 4])
    }
}

extension String {
    var trimmingTrailingSpaces: String {
        var copy = self
        while copy.last == " " { copy.removeLast() }
        return copy
    }
}

extension Output {
    /// Writes one line to standard output at once (not through `print`'s buffer), so a pipe or a
    /// terminal sees it as soon as it is written.
    static func line(_ text: String) {
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }

    /// One `ledger watch` line: `#12 19:40:02  Checking  -200.00 USD  balance 1,300.00 USD  "Rainy day"`.
    static func change(_ change: LedgerChange, in update: LedgerUpdate) -> String {
        let currency = change.currency ?? ""
        func amount(_ value: Int64) -> String {
            let text = money(value, currency).trimmingTrailingSpaces
            return value > 0 ? "+" + text : text
        }
        func balance(_ label: String = "balance") -> String? {
            change.balance.map { "\(label) \(money($0, currency).trimmingTrailingSpaces)" }
        }
        let account = change.account ?? "(unknown account)"
        var parts: [String?]
        switch change.kind {
        case .posted, .edited:
            guard change.account != nil || change.amount != nil else {
                return stamp(update) + "  a transaction, since deleted: \(change.objectID)"
            }
            parts = [account, change.kind == .edited ? "edited" : nil, change.amount.map(amount), balance()]
        case .removed:
            parts = ["removed a transaction of \(change.amount.map { MinorUnits.format($0) } ?? "unknown amount")"]
        case .opened:
            parts = [account, "opened", balance()]
        case .accountChanged:
            parts = [account, balance()]
        case .closed:
            parts = [account, "closed"]
        }
        if let note = change.note { parts.append(String(reflecting: note)) }
        return ([stamp(update)] + parts.compactMap { $0 }).joined(separator: "  ")
    }

    /// `#12 19:40:02`: the commit's token and its time of day (UTC).
    private static func stamp(_ update: LedgerUpdate) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withTime, .withColonSeparatorInTime]
        return "#\(update.token.rawValue) \(formatter.string(from: update.timestamp))"
    }
}
