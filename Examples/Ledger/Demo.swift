import Foundation
import Ledger

/// `ledger demo`: seeds three accounts and some transactions, prints the balances, moves one
/// transaction to another account, and prints the balances again, checking each against the
/// sum of its transactions.
struct Demo {
    let arguments: CLIArguments

    func run() async throws {
        _ = try arguments.operands(after: 1, count: 0...0, form: "demo")
        let path = arguments.store ?? LedgerStore.temporaryPath(engine: arguments.engine)
        let store = try LedgerStore(engine: arguments.engine, path: path, schema: arguments.schema, create: true)
        let existing = try await store.accounts.list()
        guard existing.isEmpty else {
            let fresh =
                arguments.engine == "postgres"
                ? "Pass --schema with a new schema name."
                : "Pass a new --store PATH, or omit --store to use a temporary one."
            throw CLIError.badInput(
                "demo needs an empty store, but \(store.location) already has \(existing.count) account(s). \(fresh)")
        }
        print("Ledger demo on \(store.engineName) at \(store.location)\n")

        let accounts = store.accounts
        let transactions = store.transactions
        let checking = try await accounts.create(name: "Checking", currency: "USD", openingBalance: 250_000)
        let savings = try await accounts.create(name: "Savings", currency: "USD", openingBalance: 1_000_000)
        let wallet = try await accounts.create(
            name: "Wallet", currency: "USD", openingBalance: 8_000, allowsOverdraft: false)

        let day: Double = 86_400
        let start = Date().addingTimeInterval(-10 * day)
        try await transactions.add(to: checking.id, amount: 320_000, note: "Salary", date: start)
        try await transactions.add(to: checking.id, amount: -145_000, note: "Rent", date: start + 1 * day)
        try await transactions.add(to: checking.id, amount: -8_640, note: "Groceries", date: start + 2 * day)
        let dinner = try await transactions.add(
            to: checking.id, amount: -5_420, note: "Dinner out", date: start + 3 * day)
        try await transactions.add(to: savings.id, amount: 1_250, note: "Interest", date: start + 4 * day)
        try await transactions.transfer(from: checking.id, to: wallet.id, amount: 10_000, note: "Cash withdrawal")
        try await transactions.add(to: wallet.id, amount: -1_250, note: "Coffee")

        let before = try await balances(store, title: "Balances before the move")

        print(
            """
            Moving \"Dinner out\" (\(Output.money(dinner.amount, "USD"))) from Checking to Wallet: it was paid in \
            cash.
            """
        )
        print("One unit of work: a fresh context, both balances recalculated, one save.\n")
        var moved = dinner
        moved.accountID = wallet.id
        try await transactions.update(transaction: moved, originalAccountID: checking.id)

        let after = try await balances(store, title: "Balances after the move")
        print(
            """
            Checking went up by \(Output.money(after["Checking"]! - before["Checking"]!, "USD")), Wallet went \
            down by \(Output.money(before["Wallet"]! - after["Wallet"]!, "USD")).\n
            """
        )

        print("Wallet forbids overdraft. Trying to transfer 500.00 USD from Wallet to Savings:")
        do {
            try await transactions.transfer(from: wallet.id, to: savings.id, amount: 50_000, note: "Too much")
            print("  unexpectedly accepted")
        } catch let error as LedgerError {
            print("  refused: \(error)")
        }
        let unchanged = try await accounts.list()
        print(
            """
              balances unchanged: \
            \(unchanged.map { "\($0.name) \(Output.money($0.balance, $0.currency))" }.joined(separator: ", "))\n
            """
        )

        print("Wallet history, newest first:")
        Output.history(try await transactions.transactions(for: wallet.id), currency: "USD")
        print(
            "\nExplore this store: swift run ledger \(store.reopenOptions) account list"
        )
    }

    /// Prints every account's balance next to its opening balance plus its transactions, and
    /// the total; returns balances by name.
    private func balances(_ store: LedgerStore, title: String) async throws -> [String: Int64] {
        print("\(title):")
        var rows: [[String]] = []
        var total: Int64 = 0
        var byName: [String: Int64] = [:]
        for account in try await store.accounts.list() {
            let history = try await store.transactions.transactions(for: account.id)
            let recomputed = history.reduce(account.openingBalance) { $0 + $1.amount }
            total += account.balance
            byName[account.name] = account.balance
            rows.append([
                account.name, Output.money(account.balance, account.currency), String(history.count),
                recomputed == account.balance ? "yes" : "NO (\(Output.money(recomputed, account.currency)))",
            ])
        }
        Output.table(["Account", "Balance", "Txns", "= opening + transactions"], rows, rightAligned: [1, 2])
        print("Total: \(Output.money(total, "USD"))\n")
        return byName
    }
}
