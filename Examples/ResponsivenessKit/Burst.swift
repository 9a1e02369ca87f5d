import Foundation
import Ledger
public import Strata
import StrataTestSupport

/// One step of a burst: a transfer, then loading the source account's history (the article's
/// fetch), as a screen would after a tap.
public struct Step: Sendable {
    /// The index of the account the money leaves.
    public var from: Int
    /// The index of the account the money goes to (never `from`).
    public var to: Int
    /// The amount, in minor units.
    public var amount: Int64
}

/// A seeded list of ledger steps, and the store they run on: a chart of accounts that each start
/// with a history of transactions.
///
/// The `responsiveness` example and `strata-bench`'s workload 8 both use it, so the two measure
/// the same work.
///
/// ```swift
/// let burst = Burst(count: 200, seed: 8)
/// let (container, accounts) = try await Burst.makeStore(.sqlite(at: url), history: 5_000)
/// ```
public struct Burst: Sendable {
    /// How many accounts the store has.
    public static let accountCount = 10
    /// The steps, the same for every burst made with the same count and seed.
    public let steps: [Step]

    /// `count` steps from a seeded generator: random accounts (never the same account twice in a
    /// step) and amounts of 1 to 5,000.
    public init(count: Int, seed: UInt64) {
        var random = SeededGenerator(seed: seed)
        steps = (0..<count).map { _ in
            let from = Int.random(in: 0..<Self.accountCount, using: &random)
            var to = Int.random(in: 0..<Self.accountCount - 1, using: &random)
            if to >= from { to += 1 }
            return Step(from: from, to: to, amount: Int64.random(in: 1...5_000, using: &random))
        }
    }

    /// Opens a new store with ``accountCount`` accounts, each with `history` transactions
    /// already, so every screen load has real work to do.
    ///
    /// The seeding is one unit of work per account (the transactions, one recalculation of the
    /// running balances, one save), not the work being measured.
    /// - Parameters:
    ///   - configuration: the engine and location of the new store.
    ///   - history: transactions per account (0 for none).
    /// - Returns: the container and the account URIs, in account order.
    /// - Throws: the errors of `PersistentContainer(schema:engine:)`, `AccountService.create`
    ///   and `save()`.
    public static func makeStore(
        _ configuration: EngineConfiguration, history: Int
    ) async throws -> (PersistentContainer, [String]) {
        let container = try PersistentContainer(schema: .ledger, engine: configuration)
        let accounts = AccountService(contexts: container)
        var ids: [String] = []
        for number in 0..<accountCount {
            ids.append(
                try await accounts.create(name: "Account \(number)", currency: "USD", openingBalance: 1_000_000).id)
        }
        let start = Date().addingTimeInterval(-Double(history) * 60)
        for id in ids {
            // Seeding in bulk: one unit of work per account, one recalculation, one save.
            try await container.performUnitOfWork { context in
                guard let url = URL(string: id) else { throw StrataError.invalidURI(id, reason: .malformed) }
                let account = try context.existingObject(
                    with: context.managedObjectID(forURIRepresentation: url), as: Account.self)
                for number in 0..<history {
                    let transaction = Transaction(context: context)
                    transaction.amount = number.isMultiple(of: 3) ? 2_500 : -1_000
                    transaction.note = "Seed \(number)"
                    transaction.date = start + Double(number) * 60
                    transaction.account = account
                }
                try account.recalculateBalances()
                try context.save()
            }
        }
        return (container, ids)
    }
}
