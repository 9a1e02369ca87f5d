import Foundation
import Strata
import Synchronization
import Testing

/// Conflicts, retries and exhausted retries of `performUnitOfWork`, from real conflicts between
/// two contexts, reach the hook and `RetryStatistics` alike.
@Suite("Instrumentation: units of work")
struct InstrumentationRetryTests {
    /// Raises the balance of `id` by one in another context of `container`, synchronously: called
    /// inside a unit of work's body (on its context's queue) after the body read the row, so the
    /// body's own save then conflicts.
    private static func saveBehindTheBody(_ container: PersistentContainer, _ id: ObjectID) {
        let outcome = Blocking.awaitTask {
            let other = container.newBackgroundContext()
            try await other.perform {
                try other.existingObject(with: id, as: Account.self).balance += 1
                try other.save()
            }
        }
        if case .failed(let error) = outcome { Issue.record("the other context's save failed: \(error)") }
    }

    /// A store with one account, opened with `log`'s hook; the account's ID.
    private static func open(
        _ kind: EngineKind, _ log: EventLog
    ) async throws -> (
        TestStore, PersistentContainer, ObjectID
    ) {
        let store = try TestStore(kind)
        let container = try store.open(reportingTo: log)
        let id = try await Account.insert(named: "A", into: container)
        log.clear()
        return (store, container, id)
    }

    @Test("a conflict between two contexts is reported, then the retry that succeeds", arguments: EngineKind.allCases)
    func conflictThenRetry(kind: EngineKind) async throws {
        let log = EventLog()
        let (store, container, id) = try await Self.open(kind, log)
        defer { container.close() }
        let attempts = Atomic<Int>(0)
        let (_, counts) = try await RetryStatistics.observing {
            try await container.performUnitOfWork(
                retries: RetryPolicy(maxRetries: 3, baseDelay: .zero, maxDelay: .zero)
            ) { context in
                let account = try context.existingObject(with: id, as: Account.self)
                if attempts.add(1, ordering: .relaxed).newValue == 1 { Self.saveBehindTheBody(container, id) }
                account.balance += 10
                try context.save()
            }
        }
        #expect(log.unitOfWork == ["conflict 1 rows", "retry 2 conflict"])
        #expect((counts.conflicts, counts.retries, counts.exhausted) == (1, 1, 0))
        // The other context's save and the retried unit of work's both committed.
        #expect(log.commits.count == 2)
        #expect(log.commits.allSatisfy { $0.byEntity["Account"]?.updated == 1 })
        _ = store
    }

    @Test("retries exhausted are reported after every attempt's conflict", arguments: EngineKind.allCases)
    func retriesExhausted(kind: EngineKind) async throws {
        let log = EventLog()
        let (store, container, id) = try await Self.open(kind, log)
        defer { container.close() }
        let (_, counts) = await RetryStatistics.observing {
            await #expect(throws: StrataError.self) {
                try await container.performUnitOfWork(
                    retries: RetryPolicy(maxRetries: 2, baseDelay: .zero, maxDelay: .zero)
                ) { context in
                    let account = try context.existingObject(with: id, as: Account.self)
                    Self.saveBehindTheBody(container, id)
                    account.balance += 10
                    try context.save()
                }
            }
        }
        #expect(
            log.unitOfWork == [
                "conflict 1 rows", "retry 2 conflict", "conflict 2 rows", "retry 3 conflict", "conflict 3 rows",
                "exhausted 3 3",
            ])
        #expect((counts.conflicts, counts.retries, counts.exhausted) == (3, 2, 1))
        _ = store
    }
}
