import Foundation
import Strata
import StrataPostgres
import StrataTestSupport
import Testing

/// On PostgreSQL a snapshot is a transaction on one of the pool's connections, so `poolSize`
/// bounds how many performs hold one at once (`poolSize - 1`: the pool keeps its last connection
/// for commits and key reservations): the next waits for a connection and gets `.busy` after
/// `checkoutTimeout`, never a hang, and reads again once a connection is free.
@Suite("PostgreSQL: the pool")
struct PostgresPoolExhaustionTests {
    @Test("more simultaneous snapshots than the pool gives readers: the extra one gets busy after checkoutTimeout")
    func exhaustedPool() async throws {
        let store = try TestStore(.postgres)
        let checkoutTimeout = Duration.seconds(1)
        let container = try PersistentContainer(
            schema: TestModels.schema,
            engine: TestPostgres.configuration(
                at: store.directory.appendingPathComponent("store.postgres"),
                options: PostgresOptions(poolSize: 3, checkoutTimeout: checkoutTimeout)))
        defer { container.close() }
        let release = DispatchSemaphore(value: 0)
        let holding = DispatchSemaphore(value: 0)
        // Two performs (poolSize - 1) take a snapshot each and keep it (on their contexts' queues, not on
        // Swift-concurrency threads) until released.
        let holders = (0..<2).map { _ in
            Task {
                let context = container.newBackgroundContext()
                try await context.perform {
                    _ = try context.count(for: FetchRequest<Account>())
                    holding.signal()
                    _ = release.wait(timeout: .now() + 30)
                }
            }
        }
        for _ in 0..<2 {
            let held = await withCheckedContinuation { continuation in
                DispatchQueue.global().async { continuation.resume(returning: holding.wait(timeout: .now() + 30)) }
            }
            if held != .success {
                release.signal()
                release.signal()
                let results = await holders.asyncMap { await $0.result }
                Issue.record("the two holding performs never took their snapshots: \(results)")
                return
            }
        }
        let context = container.newBackgroundContext()
        let started = ContinuousClock.now
        let outcome: Result<Int, any Error>
        do {
            outcome = .success(try await context.perform { try context.count(for: FetchRequest<Account>()) })
        } catch {
            outcome = .failure(error)
        }
        let waited = ContinuousClock.now - started
        release.signal()
        release.signal()
        for holder in holders { try await holder.value }
        print("exhausted pool: the third snapshot waited \(waited): \(outcome)")
        guard case .failure(StrataError.busy(let message, _)) = outcome else {
            Issue.record("expected .busy from a third snapshot on a pool of 3, got \(outcome)")
            return
        }
        #expect(waited >= checkoutTimeout - .milliseconds(50), "busy before checkoutTimeout: \(message)")
        #expect(waited < checkoutTimeout + .seconds(3), "busy long after checkoutTimeout: \(waited)")
        let again = try await context.perform { try context.count(for: FetchRequest<Account>()) }
        #expect(again == 0)
    }
}

extension Array {
    /// The elements transformed in order by an async function.
    func asyncMap<T>(_ transform: (Element) async -> T) async -> [T] {
        var results: [T] = []
        for element in self { results.append(await transform(element)) }
        return results
    }
}
