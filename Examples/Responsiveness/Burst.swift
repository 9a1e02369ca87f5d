import Foundation
import Ledger
import Strata
import StrataLMDB
import StrataSQLite
import StrataTestSupport

/// One step of the burst: a transfer, then loading the source account's history (the
/// article's fetch), as a screen would after a tap.
struct Step: Sendable {
    var from: Int
    var to: Int
    var amount: Int64
}

/// A fresh store with a chart of accounts, and the same seeded list of steps for every run.
struct Burst {
    static let accountCount = 10
    let steps: [Step]

    init(count: Int, seed: UInt64) {
        var random = SeededGenerator(seed: seed)
        steps = (0..<count).map { _ in
            let from = Int.random(in: 0..<Self.accountCount, using: &random)
            var to = Int.random(in: 0..<Self.accountCount - 1, using: &random)
            if to >= from { to += 1 }
            return Step(from: from, to: to, amount: Int64.random(in: 1...5_000, using: &random))
        }
    }

    /// Opens a new store on `engine` in a temporary location with the accounts, each with
    /// `history` transactions already, so every screen load has real work to do.
    /// - Returns: the container and the account URIs.
    static func makeStore(engine: String, history: Int) async throws -> (PersistentContainer, [String]) {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent(
            "responsiveness-\(UUID().uuidString)\(engine == "lmdb" ? ".lmdb" : ".sqlite")")
        let container = try PersistentContainer(
            schema: .ledger, engine: engine == "lmdb" ? .lmdb(at: url) : .sqlite(at: url))
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
