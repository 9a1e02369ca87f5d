import Foundation
import Strata
import StrataTestSupport
import Synchronization
import Testing

/// `performUnitOfWork` retries `.busy` like `.conflict`, within its policy, and an exhausted
/// budget says how many attempts were made and why each failed.
@Suite("busy retries")
struct BusyRetryTests {
    /// Opens a store through the fault injector and saves one account named "A".
    static func open(_ kind: EngineKind) throws -> (TestStore, PersistentContainer, FaultController) {
        let store = try TestStore(kind)
        let faults = FaultController()
        let container = try store.open(schema: TestModels.schema, faults: faults)
        return (store, container, faults)
    }

    static func names(_ container: PersistentContainer) async throws -> [String] {
        let context = container.newBackgroundContext()
        return try await context.perform {
            try context.fetch(FetchRequest<Account>(sortBy: [SortDescriptor(\.name)])).map(\.name)
        }
    }

    @Test("busy three times, then the unit of work commits on its fourth attempt", arguments: EngineKind.allCases)
    func busyIsRetried(kind: EngineKind) async throws {
        let (store, container, faults) = try Self.open(kind)
        faults.busyCommits(3)
        let attempts = Atomic<Int>(0)
        let (_, counts) = try await RetryStatistics.observing {
            try await container.performUnitOfWork(
                retries: RetryPolicy(maxRetries: 5, baseDelay: .zero, maxDelay: .zero)
            ) { context in
                attempts.add(1, ordering: .relaxed)
                Account(context: context).name = "A"
                try context.save()
            }
        }
        let attemptCount = attempts.load(ordering: .relaxed)
        #expect(attemptCount == 4)
        #expect(counts.retries == 3)
        #expect(counts.exhausted == 0)
        #expect(faults.injectedFailures == 3)
        #expect(try await Self.names(container) == ["A"])
        _ = store
    }

    @Test(
        "an exhausted budget throws retriesExhausted with every attempt's reason, and nothing is written",
        arguments: EngineKind.allCases)
    func exhaustedBudget(kind: EngineKind) async throws {
        let (store, container, faults) = try Self.open(kind)
        faults.busyCommits(10)
        let attempts = Atomic<Int>(0)
        let error = await #expect(throws: StrataError.self) {
            try await container.performUnitOfWork(
                retries: RetryPolicy(maxRetries: 2, baseDelay: .zero, maxDelay: .zero)
            ) { context in
                attempts.add(1, ordering: .relaxed)
                Account(context: context).name = "A"
                try context.save()
            }
        }
        guard case .retriesExhausted(let count, let errors)? = error else {
            Issue.record("expected retriesExhausted, got \(String(describing: error))")
            return
        }
        #expect(count == 3)
        let attemptCount = attempts.load(ordering: .relaxed)
        #expect(attemptCount == 3)
        #expect(errors.count == 3)
        #expect(errors.allSatisfy { if case .busy = $0 { true } else { false } })
        let text = "\(error!)"
        #expect(text.contains("failed 3 time(s)"))
        #expect(text.contains("attempt 1: busy") && text.contains("attempt 3: busy"))
        #expect(try await Self.names(container).isEmpty)
        _ = store
    }

    @Test("RetryPolicy.none throws the first busy error itself", arguments: EngineKind.allCases)
    func noneThrowsFirstError(kind: EngineKind) async throws {
        let (store, container, faults) = try Self.open(kind)
        faults.busyCommits(1)
        let error = await #expect(throws: StrataError.self) {
            try await container.performUnitOfWork(retries: .none) { context in
                Account(context: context).name = "A"
                try context.save()
            }
        }
        guard case .busy(let detail, _)? = error else {
            Issue.record("expected busy, got \(String(describing: error))")
            return
        }
        #expect(detail.contains("injected fault"))
        _ = store
    }

    @Test("a policy with a negative value is refused before the body runs", arguments: EngineKind.allCases)
    func negativePolicy(kind: EngineKind) async throws {
        let (store, container, _) = try Self.open(kind)
        let ran = Atomic<Bool>(false)
        for policy in [
            RetryPolicy(maxRetries: -1), RetryPolicy(baseDelay: .milliseconds(-1)), RetryPolicy(maxDelay: .seconds(-5)),
        ] {
            let error = await #expect(throws: StrataError.self) {
                try await container.performUnitOfWork(retries: policy) { _ in ran.store(true, ordering: .relaxed) }
            }
            guard case .misuse(let message, _)? = error else {
                Issue.record("expected misuse for \(policy), got \(String(describing: error))")
                continue
            }
            #expect(message.contains("RetryPolicy."))
        }
        let bodyRan = ran.load(ordering: .relaxed)
        #expect(!bodyRan)
        _ = store
    }
}
