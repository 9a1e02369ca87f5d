import Foundation
import Strata

/// A `perform` reads one snapshot: commits made meanwhile stay invisible until the next one.
enum IsolationChecks {
    static let all: [ConformanceCheck] = [
        ConformanceCheck("Isolation", "a reader's snapshot does not change while another context commits", snapshot),
        ConformanceCheck("Isolation", "a snapshot still reads rows deleted after it began", deletedRows),
    ]

    /// Runs `work` in another context and waits for it from inside a `perform`.
    static func commitMeanwhile(_ container: PersistentContainer, _ work: @escaping @Sendable (ObjectContext) throws -> Void) {
        let done = DispatchSemaphore(value: 0)
        Task.detached {
            _ = try? await container.performUnitOfWork { context in try work(context) }
            done.signal()
        }
        done.wait()
    }

    static func snapshot(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        let id = try await container.makeAccount("A", balance: 1)
        let reader = container.newBackgroundContext()
        let seen = try await reader.perform {
            let before = try reader.count(for: FetchRequest<KitAccount>())
            commitMeanwhile(container) { context in
                KitAccount(context: context).name = "B"
                try context.existingObject(with: id, as: KitAccount.self).balance = 2
                try context.save()
            }
            let balances = try reader.fetch(FetchRequest<KitAccount>()).map(\.balance)
            return [before, try reader.count(for: FetchRequest<KitAccount>())] + balances.map(Int.init)
        }
        try kit.expectEqual(seen, [1, 1, 1], "count before, count after and balances inside the snapshot")
        let later = try await reader.perform { try reader.count(for: FetchRequest<KitAccount>()) }
        try kit.expectEqual(later, 2, "count in the next perform")
    }

    static func deletedRows(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        let id = try await container.makeAccount("Doomed", balance: 7)
        let reader = container.newBackgroundContext()
        let balance = try await reader.perform {
            _ = try reader.count(for: FetchRequest<KitAccount>())
            commitMeanwhile(container) { context in
                context.delete(try context.existingObject(with: id))
                try context.save()
            }
            return try reader.existingObject(with: id, as: KitAccount.self).balance
        }
        try kit.expectEqual(balance, 7, "the deleted account's balance inside the older snapshot")
    }
}
