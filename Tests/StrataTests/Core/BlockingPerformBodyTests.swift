import Dispatch
import Foundation
import Strata
import Synchronization
import Testing

/// A `perform` body may block (a semaphore, a lock, a synchronous wait) until other async work
/// has run: it runs on its context's queue, never on the caller's cooperative-pool thread. Were
/// bodies run on the caller's thread (the "inline perform" tried for issue 16), more blocked
/// bodies than the pool has threads would leave no thread for the work they wait for.
@Suite("blocking perform bodies")
struct BlockingPerformBodyTests {
    /// How long a body waits before calling the wait a deadlock: a watchdog, so that a broken
    /// guarantee fails the test instead of hanging the suite. A working one answers as soon as
    /// every body has started, which took 15 s in a run beside the whole conformance kit (the
    /// group's tasks wait for pool threads that the kit's synchronous checks hold).
    static let watchdog = DispatchTimeInterval.seconds(60)

    @Test(
        "more blocked bodies than the cooperative pool has threads still let ordinary tasks run",
        arguments: EngineKind.allCases)
    func blockedBodiesLeaveThePoolFree(kind: EngineKind) async throws {
        let store = try TestStore(kind)
        let container = try store.open()
        // More bodies than the pool has threads (one per core), each on its own fresh context.
        let bodies = ProcessInfo.processInfo.activeProcessorCount + 2
        let started = StartedBodies()
        let release = DispatchSemaphore(value: 0)
        let outcomes = try await withThrowingTaskGroup(of: String.self) { group in
            for index in 0..<bodies {
                group.addTask {
                    let context = container.newBackgroundContext()
                    return try await context.perform { () -> String in
                        _ = try context.count(for: FetchRequest<Account>())
                        started.count.add(1, ordering: .acquiringAndReleasing)
                        let released = release.wait(timeout: .now() + Self.watchdog) == .success
                        return released ? "released" : "body \(index): deadlock, never released"
                    }
                }
            }
            // An ordinary task on the cooperative pool: it can release the bodies only if it gets
            // a thread while they all block.
            group.addTask {
                while started.count.load(ordering: .acquiring) < bodies {
                    try await Task.sleep(for: .milliseconds(1))
                }
                for _ in 0..<bodies { release.signal() }
                return "releaser"
            }
            var outcomes: [String] = []
            for try await outcome in group { outcomes.append(outcome) }
            return outcomes.sorted()
        }
        #expect(outcomes == Array(repeating: "released", count: bodies) + ["releaser"], "\(outcomes)")
    }
}

/// How many bodies have started (shared by the test's tasks).
private final class StartedBodies: Sendable {
    let count = Atomic<Int>(0)
}
