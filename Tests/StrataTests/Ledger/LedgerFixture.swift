import Foundation
import Ledger
import Strata
import StrataTestSupport

// The test target has its own `Account` fixture model; these name the ledger's.
typealias LedgerAccount = Ledger.Account
typealias LedgerTransaction = Ledger.Transaction

/// A ledger store on one engine in a temporary directory, opened through a fault-injecting
/// engine wrapper, with the two services over it.
struct LedgerFixture: Sendable {
    let store: TestStore
    let faults = FaultController()
    let container: PersistentContainer
    let accounts: AccountService
    let transactions: TransactionService

    init(_ kind: EngineKind) throws {
        store = try TestStore(kind)
        container = try PersistentContainer(ledger: .faultInjecting(store.configuration, faults: faults))
        accounts = AccountService(contexts: container)
        transactions = TransactionService(contexts: container)
    }

    /// A small chart of accounts, all in USD except Travel.
    struct Chart: Sendable {
        /// $1,000.00, overdraft allowed.
        var checking: AccountSnapshot
        /// $0.00, overdraft allowed.
        var savings: AccountSnapshot
        /// $50.00, no overdraft.
        var wallet: AccountSnapshot
        /// €200.00 (EUR), overdraft allowed.
        var travel: AccountSnapshot
    }

    func seedChart() async throws -> Chart {
        Chart(
            checking: try await accounts.create(name: "Checking", currency: "USD", openingBalance: 100_000),
            savings: try await accounts.create(name: "Savings", currency: "USD"),
            wallet: try await accounts.create(
                name: "Wallet", currency: "USD", openingBalance: 5_000, allowsOverdraft: false),
            travel: try await accounts.create(name: "Travel", currency: "EUR", openingBalance: 20_000))
    }

    /// What the store holds, read straight from a fresh context (not through the services).
    func audit() async throws -> LedgerAudit {
        let context = container.newBackgroundContext()
        return try await context.perform {
            let accounts = try context.fetch(FetchRequest<LedgerAccount>(sortBy: [SortDescriptor(\.name)]))
            let lines = accounts.map { account in
                let ordered = account.transactions.allObjects.sorted {
                    ($0.date, $0.objectID.primaryKey ?? 0) < ($1.date, $1.objectID.primaryKey ?? 0)
                }
                var running = account.openingBalance
                var runningBalancesAgree = true
                for transaction in ordered {
                    running += transaction.amount
                    if transaction.runningBalance != running { runningBalancesAgree = false }
                }
                return LedgerAudit.Line(
                    name: account.name, balance: account.balance, expectedBalance: running,
                    notes: ordered.map(\.note), runningBalancesAgree: runningBalancesAgree)
            }
            let transactionCount = try context.count(for: FetchRequest<LedgerTransaction>())
            return LedgerAudit(lines: lines, transactionCount: transactionCount)
        }
    }
}

/// The store's accounts and transactions at one moment, for "nothing changed" checks.
struct LedgerAudit: Sendable, Equatable {
    struct Line: Sendable, Equatable {
        var name: String
        var balance: Int64
        /// Opening balance plus the sum of the account's transactions.
        var expectedBalance: Int64
        /// Notes, oldest first.
        var notes: [String]
        var runningBalancesAgree: Bool
    }

    var lines: [Line]
    var transactionCount: Int

    func line(_ name: String) -> Line? { lines.first { $0.name == name } }

    /// Every balance is its opening balance plus its transactions, running balances included.
    var isConsistent: Bool { lines.allSatisfy { $0.balance == $0.expectedBalance && $0.runningBalancesAgree } }
}
