import Foundation
import Strata
import Synchronization

/// A `perform` reads one snapshot: commits made meanwhile stay invisible until the next one.
enum IsolationChecks {
    static let all: [ConformanceCheck] = [
        ConformanceCheck("Isolation", "a reader's snapshot does not change while another context commits", snapshot),
        ConformanceCheck("Isolation", "a snapshot still reads rows deleted after it began", deletedRows),
    ]

    /// How long a commit made while a snapshot is open may take before the check fails: a
    /// watchdog, so an engine whose open snapshot blocks writers fails instead of hanging.
    static let commitWatchdogSeconds = 60

    /// Runs `work` as a unit of work in another context and waits for it from inside a
    /// `perform`, with a watchdog. The commit must succeed: its error fails the check, and so
    /// does a commit still unfinished when the watchdog fires.
    static func commitMeanwhile(
        _ kit: ConformanceHarness, _ container: PersistentContainer, _ what: String,
        _ work: @escaping @Sendable (ObjectContext) throws -> Void
    ) throws {
        let done = DispatchSemaphore(value: 0)
        let outcome = Mutex<Result<Void, any Error>?>(nil)
        Task.detached {
            do {
                try await container.performUnitOfWork { context in try work(context) }
                outcome.withLock { $0 = .success(()) }
            } catch {
                outcome.withLock { $0 = .failure(error) }
            }
            done.signal()
        }
        guard done.wait(timeout: .now() + .seconds(commitWatchdogSeconds)) == .success else {
            throw kit.fail(
                """
                \(what) while a snapshot was open did not finish within \(commitWatchdogSeconds) s: an open \
                snapshot must not block writers
                """
            )
        }
        if case .failure(let error)? = outcome.withLock({ $0 }) {
            throw kit.fail("\(what) while a snapshot was open failed: \(error)")
        }
    }

    static func snapshot(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        let id = try await container.makeAccount("A", balance: 1)
        let reader = container.newBackgroundContext()
        let seen = try await reader.perform {
            let before = try reader.count(for: FetchRequest<KitAccount>())
            try commitMeanwhile(kit, container, "inserting B and updating A") { context in
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
        let committed = try await container.read { try $0.existingObject(with: id, as: KitAccount.self).balance }
        try kit.expectEqual(committed, 2, "A's balance in a fresh context, after the update committed")
    }

    static func deletedRows(_ kit: ConformanceHarness) async throws {
        let container = try kit.open()
        let id = try await container.makeAccount("Doomed", balance: 7)
        let reader = container.newBackgroundContext()
        let balance = try await reader.perform {
            _ = try reader.count(for: FetchRequest<KitAccount>())
            try commitMeanwhile(kit, container, "deleting the account") { context in
                context.delete(try context.existingObject(with: id))
                try context.save()
            }
            return try reader.existingObject(with: id, as: KitAccount.self).balance
        }
        try kit.expectEqual(balance, 7, "the deleted account's balance inside the older snapshot")
        let remaining = try await reader.perform { try reader.count(for: FetchRequest<KitAccount>()) }
        try kit.expectEqual(remaining, 0, "accounts in the next perform, after the delete committed")
    }
}
