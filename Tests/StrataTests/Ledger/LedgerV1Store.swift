import Foundation
import Ledger
import Strata

/// A version 1 ledger store, written with the frozen ``LedgerSchemaV1`` classes (the services
/// are version 4), and what a migration must keep of it.
struct LedgerV1Store {
    /// One version 1 transaction and what the current version must make of it.
    struct Line: Sendable, Equatable {
        var account: String
        var amount: Int64
        /// The version 1 memo, which later versions call the note.
        var memo: String
        var day: Int
        /// The category the migration must give it (nil: no keyword in the memo).
        var category: String?
        /// The running balance after it, in its account.
        var runningBalance: Int64 = 0
    }

    static let start = Date(timeIntervalSince1970: 1_700_000_000)

    /// Opening balances by account name.
    static let openings: [String: Int64] = ["Checking": 250_000, "Savings": 1_000_000, "Wallet": 8_000]

    /// The transactions, in the order they are written (not date order: day 2 comes after day 5).
    static let lines: [Line] = withRunningBalances([
        Line(account: "Checking", amount: 320_000, memo: "Salary", day: 0, category: "income"),
        Line(account: "Checking", amount: -145_000, memo: "Rent", day: 1, category: "housing"),
        Line(account: "Checking", amount: -5_420, memo: "Dinner out", day: 5, category: "dining"),
        Line(account: "Checking", amount: -8_640, memo: "Weekly GROCERIES", day: 2, category: "groceries"),
        Line(account: "Checking", amount: -10_000, memo: "Cash withdrawal", day: 6, category: "transfer"),
        Line(account: "Wallet", amount: 10_000, memo: "Cash withdrawal", day: 6, category: "transfer"),
        Line(account: "Wallet", amount: -1_250, memo: "Coffee", day: 7, category: "dining"),
        Line(account: "Wallet", amount: -3_000, memo: "Birthday present", day: 8, category: nil),
        Line(account: "Savings", amount: 1_250, memo: "Interest", day: 4, category: "income"),
        Line(account: "Savings", amount: -4_500, memo: "Train to Lyon", day: 9, category: "travel"),
        Line(account: "Savings", amount: -700, memo: "", day: 10, category: nil),
    ])

    /// Each account's balance: its opening balance plus its transactions.
    static var balances: [String: Int64] {
        var balances = openings
        for line in lines { balances[line.account, default: 0] += line.amount }
        return balances
    }

    /// The lines with each running balance filled in, account by account in date order.
    private static func withRunningBalances(_ lines: [Line]) -> [Line] {
        var result = lines
        var running = openings
        for index in result.indices.sorted(by: { result[$0].day < result[$1].day }) {
            running[result[index].account, default: 0] += result[index].amount
            result[index].runningBalance = running[result[index].account] ?? 0
        }
        return result
    }

    /// Writes the accounts and transactions into a new version 1 store at `configuration` and
    /// closes it.
    static func write(to configuration: EngineConfiguration) async throws {
        let container = try PersistentContainer(schema: try LedgerSchemaV1.schema(), engine: configuration)
        defer { container.close() }
        let context = container.newBackgroundContext()
        try await context.perform {
            var accounts: [String: LedgerSchemaV1.Account] = [:]
            for (name, opening) in openings.sorted(by: { $0.key < $1.key }) {
                let account = LedgerSchemaV1.Account(context: context)
                account.name = name
                account.openingBalance = opening
                account.balance = balances[name] ?? 0
                account.allowsOverdraft = name != "Wallet"
                accounts[name] = account
            }
            for line in lines {
                let transaction = LedgerSchemaV1.Transaction(context: context)
                transaction.amount = line.amount
                transaction.memo = line.memo
                transaction.date = date(ofDay: line.day)
                transaction.runningBalance = line.runningBalance
                transaction.account = accounts[line.account]
            }
            try context.save()
        }
    }

    static func date(ofDay day: Int) -> Date { start.addingTimeInterval(Double(day) * 86_400) }
}

extension LedgerV1Store {
    /// Writes a version 1 store with one account, "Bulk", holding `count` transactions of one
    /// cent each, and closes it.
    static func writeBulk(count: Int, to configuration: EngineConfiguration) async throws {
        let container = try PersistentContainer(schema: try LedgerSchemaV1.schema(), engine: configuration)
        defer { container.close() }
        let context = container.newBackgroundContext()
        try await context.perform {
            let account = LedgerSchemaV1.Account(context: context)
            account.name = "Bulk"
            account.balance = Int64(count)
            for index in 0..<count {
                let transaction = LedgerSchemaV1.Transaction(context: context)
                transaction.amount = 1
                transaction.memo = index.isMultiple(of: 2) ? "Coffee" : "Rent"
                transaction.date = date(ofDay: index)
                transaction.runningBalance = Int64(index + 1)
                transaction.account = account
            }
            try context.save()
        }
    }
}
