import Foundation
import Strata
import Synchronization
import Testing

/// `performUnitOfWork` re-runs a unit of work that lost two conflicts alone in its container, after
/// the attempts already running: within one process a unit of work conflicts at most twice. No wait
/// at that gate outlasts the retry policy's `maxDelay`, so a unit of work that blocks cannot stop
/// the container.
@Suite("Units of work: a second re-run runs alone")
struct UnitOfWorkGateTests {
    static let taskCount = 8
    static let incrementsPerTask = 20

    /// A store with one account at balance 0; the account's ID.
    private static func open(_ kind: EngineKind) async throws -> (TestStore, PersistentContainer, ObjectID) {
        let store = try TestStore(kind)
        let container = try store.open()
        return (store, container, try await Account.insert(named: "Hot", into: container))
    }

    @Test(
        "8 tasks raising one balance: every increment lands and no unit of work runs more than three times",
        arguments: EngineKind.allCases)
    func hotRowConflictsAtMostOnce(kind: EngineKind) async throws {
        let (store, container, id) = try await Self.open(kind)
        defer { container.close() }
        // A generous bound, so that the gate's exclusivity, not its time limit, is what is tested.
        let policy = RetryPolicy(maxRetries: 50, baseDelay: .microseconds(100), maxDelay: .seconds(30))
        let attemptsPerUnit = try await withThrowingTaskGroup(of: [Int].self) { group in
            for _ in 0..<Self.taskCount {
                group.addTask {
                    var attempts: [Int] = []
                    for _ in 0..<Self.incrementsPerTask {
                        let count = Atomic<Int>(0)
                        try await container.performUnitOfWork(retries: policy) { context in
                            count.add(1, ordering: .relaxed)
                            try context.existingObject(with: id, as: Account.self).balance += 1
                            try context.save()
                        }
                        attempts.append(count.load(ordering: .relaxed))
                    }
                    return attempts
                }
            }
            return try await group.reduce(into: [Int]()) { $0 += $1 }
        }
        let reruns = attemptsPerUnit.map { $0 - 1 }.reduce(0, +)
        print("hot row \(kind): \(attemptsPerUnit.count) units of work, \(reruns) re-runs")
        #expect(attemptsPerUnit.count == Self.taskCount * Self.incrementsPerTask)
        #expect(
            attemptsPerUnit.allSatisfy { $0 <= 3 }, "attempts per unit of work: \(attemptsPerUnit.sorted().suffix(5))")

        let check = container.newBackgroundContext()
        let balance = try await check.perform { try check.existingObject(with: id, as: Account.self).balance }
        #expect(balance == Int64(Self.taskCount * Self.incrementsPerTask))
        _ = store
    }

    @Test(
        "a lone re-run that waits for another unit of work of its container cannot stop it",
        arguments: EngineKind.allCases)
    func blockedRerunCannotStopTheContainer(kind: EngineKind) async throws {
        let (store, container, id) = try await Self.open(kind)
        defer { container.close() }
        let attempts = Atomic<Int>(0)
        let policy = RetryPolicy(maxRetries: 3, baseDelay: .zero, maxDelay: .milliseconds(20))
        try await container.performUnitOfWork(retries: policy) { context in
            let account = try context.existingObject(with: id, as: Account.self)
            let attempt = attempts.add(1, ordering: .relaxed).newValue
            // The first two attempts conflict (the inner unit of work raises the same balance);
            // the third, which runs alone, waits synchronously for another unit of work of the same
            // container (which inserts an account), which must not wait for it in turn.
            Self.runAndWait {
                try await container.performUnitOfWork(retries: policy) { other in
                    if attempt <= 2 {
                        try other.existingObject(with: id, as: Account.self).balance += 1
                    } else {
                        Account(context: other).name = "Inner"
                    }
                    try other.save()
                }
            }
            account.balance += 10
            try context.save()
        }
        #expect(attempts.load(ordering: .relaxed) == 3)

        let check = container.newBackgroundContext()
        let (balance, names) = try await check.perform {
            let balance = try check.existingObject(with: id, as: Account.self).balance
            let names = try check.fetch(FetchRequest<Account>(sortBy: [SortDescriptor(\.name)])).map(\.name)
            return (balance, names)
        }
        // 1 from each inner unit of work behind the first two attempts, 10 from the third's save.
        #expect(balance == 12)
        #expect(names == ["Hot", "Inner"])
        _ = store
    }

    /// Runs `body` in a task and blocks the calling thread (a context's queue) until it ends, or
    /// records an issue after 20 seconds: bounded, so that a gate that never lets the inner unit
    /// of work in fails the test instead of hanging it (the inner one's own bound is 20 ms).
    private static func runAndWait(_ body: @escaping @Sendable () async throws -> Void) {
        switch Blocking.awaitTask(timeout: .seconds(20), body) {
        case .finished: break
        case .failed(let error): Issue.record("the inner unit of work failed: \(error)")
        case .timedOut: Issue.record("the inner unit of work did not run while the re-run waited for it")
        }
    }
}
