import Foundation
import Ledger

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
