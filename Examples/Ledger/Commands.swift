import Foundation
import Ledger

/// Runs one command of the command line.
struct Commands {
    let arguments: CLIArguments

    func open(create: Bool = false) throws -> LedgerStore {
        try LedgerStore(arguments, create: create)
    }

    /// Dispatches on the command words.
    /// - Throws: ``CLIError``, `LedgerError` and `StrataError`.
    func run() async throws {
        let words = arguments.words
        switch (words.first, words.dropFirst().first) {
        case ("init", _): try await initialize()
        case ("account", "add"): try await addAccount()
        case ("account", "list"): try await listAccounts()
        case ("account", "show"): try await showAccount()
        case ("account", _): throw CLIError.usage("`account` needs one of add, list, show")
        case ("add", _): try await add()
        case ("move", _): try await move()
        case ("transfer", _): try await transfer()
        case ("history", _): try await history()
        case ("import", _): try await BatchCommands(arguments: arguments).importFile()
        case ("report", _): try await BatchCommands(arguments: arguments).report()
        case ("purge", _): try await BatchCommands(arguments: arguments).purge()
        case ("watch", _): try await Watch(arguments: arguments).run()
        case ("demo", _): try await Demo(arguments: arguments).run()
        case (nil, _): throw CLIError.usage("no command given")
        case (let command?, _): throw CLIError.usage("unknown command \(String(reflecting: command))")
        }
    }

    private func initialize() async throws {
        _ = try arguments.operands(after: 1, count: 0...0, form: "init")
        let existed = LedgerStore.exists(arguments)
        let store = try open(create: true)
        let count = try await store.accounts.list().count
        print(
            """
            \(existed ? "Opened" : "Created") the ledger store at \(store.location) (\(store.engineName)); it has \
            \(count) account(s).
            """
        )
    }

    private func addAccount() async throws {
        let operands = try arguments.operands(
            after: 2, count: 1...1, form: "account add NAME [--currency USD] [--opening AMOUNT] [--no-overdraft]")
        let opening =
            try arguments.options["--opening"].map { text throws(LedgerError) in try MinorUnits.parse(text) } ?? 0
        let store = try open()
        let account = try await store.accounts.create(
            name: operands[0], currency: arguments.options["--currency"] ?? "USD", openingBalance: opening,
            allowsOverdraft: !arguments.flags.contains("--no-overdraft"))
        print("Opened \(account.name) with \(Output.money(account.balance, account.currency)): \(account.id)")
    }

    private func listAccounts() async throws {
        _ = try arguments.operands(after: 2, count: 0...0, form: "account list")
        let accounts = try await open().accounts.list()
        if accounts.isEmpty {
            print("No accounts yet. Open one with `swift run ledger account add NAME`.")
        } else {
            Output.accounts(accounts)
        }
    }

    private func showAccount() async throws {
        let operands = try arguments.operands(after: 2, count: 1...1, form: "account show ACCOUNT")
        let store = try open()
        let account = try await store.accounts.account(uri: try await store.accountURI(operands[0]))
        Output.accounts([account])
        print("")
        Output.history(try await store.transactions.transactions(for: account.id), currency: account.currency)
    }

    private func add() async throws {
        let operands = try arguments.operands(
            after: 1, count: 2...3, form: "add ACCOUNT AMOUNT [NOTE] [--category CATEGORY]")
        let amount = try MinorUnits.parse(operands[1])
        let store = try open()
        let accountURI = try await store.accountURI(operands[0])
        let record = try await store.transactions.add(
            to: accountURI, amount: amount, note: operands.count > 2 ? operands[2] : "",
            category: arguments.options["--category"])
        let account = try await store.accounts.account(uri: accountURI)
        print(
            """
            Added \(Output.money(record.amount, account.currency)) to \(account.name); balance \
            \(Output.money(account.balance, account.currency)). \(record.id)
            """
        )
    }

    private func move() async throws {
        let operands = try arguments.operands(after: 1, count: 2...2, form: "move TRANSACTION ACCOUNT")
        let store = try open()
        let target = try await store.accountURI(operands[1])
        var record = try await store.transactions.transaction(operands[0])
        let original = record.accountID
        record.accountID = target
        try await store.transactions.update(transaction: record, originalAccountID: original)
        let from = try await store.accounts.account(uri: original)
        let to = try await store.accounts.account(uri: target)
        print(
            """
            Moved \(record.note.isEmpty ? "the transaction" : String(reflecting: record.note)) from \(from.name) \
            to \(to.name).
            """
        )
        Output.accounts([from, to], withURIs: false)
    }

    private func transfer() async throws {
        let operands = try arguments.operands(after: 1, count: 3...4, form: "transfer FROM TO AMOUNT [NOTE]")
        let amount = try MinorUnits.parse(operands[2])
        let store = try open()
        let from = try await store.accountURI(operands[0])
        let to = try await store.accountURI(operands[1])
        try await store.transactions.transfer(
            from: from, to: to, amount: amount, note: operands.count > 3 ? operands[3] : "Transfer")
        Output.accounts(
            [try await store.accounts.account(uri: from), try await store.accounts.account(uri: to)], withURIs: false)
    }

    private func history() async throws {
        let operands = try arguments.operands(after: 1, count: 1...1, form: "history ACCOUNT")
        let store = try open()
        let account = try await store.accounts.account(uri: try await store.accountURI(operands[0]))
        let records = try await store.transactions.transactions(for: account.id)
        print(
            """
            \(account.name): \(Output.money(account.balance, account.currency)) after \(records.count) \
            transaction(s), opening \(Output.money(account.openingBalance, account.currency))
            """
        )
        if !records.isEmpty { Output.history(records, currency: account.currency) }
    }
}
