import Foundation
import Synchronization
import Testing

@testable import Strata
@testable import StrataLMDB
@testable import StrataSQLite

/// Many saves at once, some of them doomed (a unique name already taken, a row changed since it
/// was read), on every engine: each save is all or nothing on its own, whatever the saves it
/// commits beside. On LMDB, saves queued together share one write transaction (group commit),
/// each in a nested transaction; a doomed save's nested transaction is aborted while the others
/// commit.
@Suite("concurrent saves stay all-or-nothing each")
struct ConcurrentCommitTests {
    static let taskCount = 8
    static let savesPerTask = 30

    /// What one save tried, and how it ended.
    enum Outcome: Sendable, Equatable {
        case inserted
        case refusedAsDuplicate
        case refusedAsStale
    }

    @Test("8 tasks × 30 saves, a fifth of them duplicates and a seventh stale", arguments: EngineKind.allCases)
    func doomedSavesWriteNothing(kind: EngineKind) async throws {
        let store = try TestStore(kind)
        let container = try store.open()
        defer { container.close() }
        let seeded = try await Account.insert(named: "seed", into: container)
        let groupedBefore = Self.groupedCommits(container)

        let outcomes = try await withThrowingTaskGroup(of: [Outcome].self) { group in
            for task in 0..<Self.taskCount {
                group.addTask { try await Self.run(task: task, container, seeded) }
            }
            return try await group.reduce(into: [Outcome]()) { $0 += $1 }
        }
        let inserted = outcomes.filter { $0 == .inserted }.count
        #expect(outcomes.count == Self.taskCount * Self.savesPerTask)
        #expect(outcomes.contains(.refusedAsDuplicate))
        #expect(outcomes.contains(.refusedAsStale))

        let check = container.newBackgroundContext()
        let (accounts, memos, seedBalance) = try await check.perform {
            let accounts = try check.fetch(FetchRequest<Account>()).map(\.name)
            let memos = try check.fetch(FetchRequest<Entry>()).map(\.memo)
            let seed = try check.existingObject(with: seeded, as: Account.self).balance
            return (accounts, memos, seed)
        }
        // Every insert landed with its entry; no refused save left its entry or its account.
        #expect(accounts.count == 1 + inserted)
        #expect(Set(accounts).count == accounts.count)
        #expect(memos.count == inserted)
        #expect(memos.allSatisfy { $0.hasPrefix("kept ") }, "\(memos.filter { !$0.hasPrefix("kept ") })")
        // Each stale save lost to a raise of the seed's balance by 1 that did commit.
        #expect(seedBalance == Int64(outcomes.filter { $0 == .refusedAsStale }.count))
        if let grouped = Self.groupedCommits(container), let groupedBefore {
            print("concurrent saves \(kind): \(grouped - groupedBefore) commits shared a write transaction")
            #expect(grouped > groupedBefore, "no two saves shared a write transaction")
        }
        _ = store
    }

    /// One task's saves: an account and its entry; every fifth one under the taken name "seed";
    /// every seventh one also raising the seed's balance, read before another save raised it.
    static func run(task: Int, _ container: PersistentContainer, _ seeded: ObjectID) async throws -> [Outcome] {
        var outcomes: [Outcome] = []
        for number in 0..<savesPerTask {
            let duplicate = number % 5 == 4
            let stale = !duplicate && number % 7 == 6
            let context = container.newBackgroundContext()
            if stale {
                // The context reads the seed; another unit of work raises it by 1 and commits.
                try await context.perform { _ = try context.existingObject(with: seeded, as: Account.self).balance }
                try await container.performUnitOfWork(retries: RetryPolicy(maxRetries: 500)) { other in
                    try other.existingObject(with: seeded, as: Account.self).balance += 1
                    try other.save()
                }
            }
            let outcome = try await context.perform { () throws -> Outcome in
                let account = Account(context: context)
                account.name = duplicate ? "seed" : "t\(task)-\(number)"
                let entry = Entry(context: context)
                entry.memo = duplicate || stale ? "refused \(task)-\(number)" : "kept \(task)-\(number)"
                entry.account = account
                if stale { try context.existingObject(with: seeded, as: Account.self).balance += 1000 }
                do {
                    try context.save()
                    return .inserted
                } catch StrataError.constraintViolation {
                    return .refusedAsDuplicate
                } catch StrataError.conflict {
                    return .refusedAsStale
                }
            }
            outcomes.append(outcome)
        }
        return outcomes
    }

    /// The embedded engine's count of commits that shared a write transaction; nil on the others.
    static func groupedCommits(_ container: PersistentContainer) -> Int? {
        switch container.engine {
        case let engine as LMDBEngine: engine.environment.groupedCommits.load(ordering: .relaxed)
        case let engine as SQLiteEngine: engine.groupedCommits.load(ordering: .relaxed)
        default: nil
        }
    }
}
