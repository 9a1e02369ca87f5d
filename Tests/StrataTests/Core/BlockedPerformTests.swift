import Dispatch
import Foundation
import Strata
import Synchronization
import Testing

/// Blocking inside a context's `perform` on another `perform` of the same context would wait
/// forever; it fails with `.misuse` naming the context instead, once the blocked body has
/// outlived `ObjectContext.blockedPerformGrace`. Calls that do not block are not refused.
@Suite("blocked perform")
struct BlockedPerformTests {
    /// How long the test waits before calling the inner perform deadlocked: a watchdog, so
    /// that a broken detection fails the test instead of hanging the suite. A working detection
    /// answers at once.
    static let watchdog = DispatchTimeInterval.seconds(30)

    /// Runs the inner task on its own thread rather than the shared cooperative pool (two
    /// threads on a two-core machine), so that other tests keeping the pool busy cannot delay
    /// it: the watchdog then measures the detection alone.
    static let innerExecutor = QueueTaskExecutor()
    /// A second such executor, for a task started inside a body that the inner task runs.
    static let otherExecutor = QueueTaskExecutor()

    @Test(
        "waiting inside perform for a perform of the same context throws misuse instead of deadlocking",
        arguments: EngineKind.allCases)
    func sameContext(kind: EngineKind) async throws {
        let store = try TestStore(kind)
        let container = try store.open()
        let context = container.newBackgroundContext(named: "ledger-import")
        let outcome = try await context.perform { () -> String in
            _ = try context.count(for: FetchRequest<Account>())
            let done = DispatchSemaphore(value: 0)
            let result = Mutex<String>("nothing")
            Task(executorPreference: Self.innerExecutor) {
                do {
                    try await context.perform { _ = try context.count(for: FetchRequest<Account>()) }
                    result.withLock { $0 = "the inner perform ran" }
                } catch StrataError.misuse(let message, _) {
                    result.withLock { $0 = message }
                } catch {
                    result.withLock { $0 = "\(error)" }
                }
                done.signal()
            }
            guard done.wait(timeout: .now() + Self.watchdog) == .success else {
                return "deadlock: the inner perform never returned"
            }
            return result.withLock { $0 }
        }
        #expect(outcome.contains("ObjectContext.perform(_:) of context ledger-import"), "\(outcome)")
        #expect(outcome.contains("same context"), "\(outcome)")
    }

    @Test(
        "a task started inside perform may use the context once that body has returned", arguments: EngineKind.allCases)
    func laterUseIsAllowed(kind: EngineKind) async throws {
        let store = try TestStore(kind)
        let container = try store.open()
        let context = container.newBackgroundContext()
        let (gate, open) = AsyncStream<Void>.makeStream()
        let later = try await context.perform { () -> Task<Int, any Error> in
            Account(context: context).name = "A"
            try context.save()
            return Task {
                for await _ in gate { break }
                return try await context.perform { try context.count(for: FetchRequest<Account>()) }
            }
        }
        open.yield()
        #expect(try await later.value == 1)
    }

    @Test(
        "a task started inside perform that does not wait may call perform while the body still runs",
        arguments: EngineKind.allCases)
    func fireAndForgetWhileRunning(kind: EngineKind) async throws {
        let store = try TestStore(kind)
        let container = try store.open()
        let context = container.newBackgroundContext()
        let calling = DispatchSemaphore(value: 0)
        let later = try await context.perform { () -> Task<Int, any Error> in
            Account(context: context).name = "A"
            try context.save()
            let task = Task(executorPreference: Self.innerExecutor) {
                calling.signal()
                return try await context.perform { try context.count(for: FetchRequest<Account>()) }
            }
            // The task calls perform while this body still runs (it signals just before the
            // call, and the body keeps going well past it); the body does not wait for it.
            _ = calling.wait(timeout: .now() + Self.watchdog)
            Thread.sleep(forTimeInterval: 0.2)
            return task
        }
        #expect(try await later.value == 1)
    }

    @Test(
        """
        waiting for a perform of the same context through another context's perform throws misuse instead of \
        deadlocking
        """,
        arguments: EngineKind.allCases)
    func sameContextThroughAnother(kind: EngineKind) async throws {
        let store = try TestStore(kind)
        let container = try store.open()
        let first = container.newBackgroundContext(named: "first")
        let second = container.newBackgroundContext(named: "second")
        let outcome = try await first.perform { () -> String in
            let done = DispatchSemaphore(value: 0)
            let result = Mutex<String>("nothing")
            Task(executorPreference: Self.innerExecutor) {
                do {
                    // second's body waits for a perform of first, whose body waits for this.
                    let inner = try await second.perform { () -> String in
                        let innerDone = DispatchSemaphore(value: 0)
                        let innerResult = Mutex<String>("nothing")
                        Task(executorPreference: Self.otherExecutor) {
                            do {
                                try await first.perform { _ = try first.count(for: FetchRequest<Account>()) }
                                innerResult.withLock { $0 = "the perform of first ran" }
                            } catch StrataError.misuse(let message, _) {
                                innerResult.withLock { $0 = message }
                            } catch {
                                innerResult.withLock { $0 = "\(error)" }
                            }
                            innerDone.signal()
                        }
                        guard innerDone.wait(timeout: .now() + Self.watchdog) == .success else {
                            return "deadlock: the perform of first never returned"
                        }
                        return innerResult.withLock { $0 }
                    }
                    result.withLock { $0 = inner }
                } catch {
                    result.withLock { $0 = "\(error)" }
                }
                done.signal()
            }
            guard done.wait(timeout: .now() + Self.watchdog) == .success else {
                return "deadlock: the perform of second never returned"
            }
            return result.withLock { $0 }
        }
        #expect(outcome.contains("ObjectContext.perform(_:) of context first"), "\(outcome)")
    }

    @Test("waiting inside one context's perform for another context's perform works", arguments: EngineKind.allCases)
    func otherContext(kind: EngineKind) async throws {
        let store = try TestStore(kind)
        let container = try store.open()
        let outer = container.newBackgroundContext()
        let inner = container.newBackgroundContext()
        let outcome = try await outer.perform { () -> String in
            let done = DispatchSemaphore(value: 0)
            let result = Mutex<String>("nothing")
            Task(executorPreference: Self.innerExecutor) {
                do {
                    let count = try await inner.perform { try inner.count(for: FetchRequest<Account>()) }
                    result.withLock { $0 = "count \(count)" }
                } catch {
                    result.withLock { $0 = "\(error)" }
                }
                done.signal()
            }
            guard done.wait(timeout: .now() + Self.watchdog) == .success else { return "deadlock" }
            return result.withLock { $0 }
        }
        #expect(outcome == "count 0")
    }
}

/// A task executor that runs its jobs one at a time on a dedicated dispatch queue.
final class QueueTaskExecutor: TaskExecutor {
    private let queue = DispatchQueue(label: "strata.tests.inner-task")

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}
