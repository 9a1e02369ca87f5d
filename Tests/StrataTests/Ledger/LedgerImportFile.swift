import Foundation
import Ledger
import Strata

/// Import files for the batch tests, made from values so that a test can compute the sums it
/// expects by hand.
struct LedgerImportFile: Sendable {
    struct Row: Sendable, Equatable {
        var externalID: String
        var account: String
        /// `YYYY-MM-DD`.
        var day: String
        var amount: Int64
        var category: String
        var note: String
    }

    var rows: [Row]

    /// The CSV text: the header, then one line per row (notes quoted, since they hold commas).
    var text: String {
        ([LedgerCSV.header]
            + rows.map {
                let note = "\"" + $0.note.replacingOccurrences(of: "\"", with: "\"\"") + "\""
                return "\($0.externalID),\($0.account),\($0.day),\(MinorUnits.format($0.amount)),\($0.category),\(note)"
            })
            .joined(separator: "\n") + "\n"
    }

    /// `count` rows over Checking, Savings and Travel (any sign) and Wallet (deposits only, it
    /// forbids overdraft), dated from 2024-01-01 on, one day apart, cycling through categories.
    static func generated(count: Int, idPrefix: String = "bank-") -> LedgerImportFile {
        let accounts = ["Checking", "Savings", "Wallet", "Travel"]
        let categories = ["dining", "groceries", "housing", ""]
        let start = Date(timeIntervalSince1970: 1_704_067_200) // 2024-01-01
        return LedgerImportFile(
            rows: (0..<count).map { index in
                let account = accounts[index % accounts.count]
                let magnitude = Int64(100 + (index * 37) % 9_000)
                let amount = account == "Wallet" || index % 3 == 0 ? magnitude : -magnitude
                return Row(
                    externalID: "\(idPrefix)\(index)", account: account,
                    day: LedgerDay.format(start.addingTimeInterval(Double(index % 90) * 86_400)),
                    amount: amount, category: categories[index % categories.count],
                    note: "Line \(index), \"quoted\", with commas")
            })
    }

    /// Each account's sum of amounts.
    var sums: [String: Int64] {
        rows.reduce(into: [:]) { $0[$1.account, default: 0] += $1.amount }
    }
}

extension LedgerFixture {
    /// How many import lines the store holds.
    func importLineCount() async throws -> Int {
        let context = container.newBackgroundContext()
        return try await context.perform { try context.count(for: FetchRequest<ImportLine>()) }
    }

    /// Every account's balance, by name.
    func balances() async throws -> [String: Int64] {
        Dictionary(uniqueKeysWithValues: try await accounts.list().map { ($0.name, $0.balance) })
    }

    /// The opening balances of the chart of ``seedChart()``.
    static let chartOpenings: [String: Int64] = ["Checking": 100_000, "Savings": 0, "Wallet": 5_000, "Travel": 20_000]
}
