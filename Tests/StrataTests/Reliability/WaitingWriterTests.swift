import Foundation
import Strata
import StrataLMDB
import StrataSQLite
import Testing

/// A writer waiting for another process's write lock gives up with `.busy` after the configured
/// busy timeout, on both engines, instead of waiting without bound.
@Suite("waiting writers", .serialized)
struct WaitingWriterTests {
    static let timeout = Duration.milliseconds(400)

    static func configuration(_ kind: EngineKind, _ store: TestStore) -> EngineConfiguration {
        let location = store.configuration.location
        return switch kind {
        case .sqlite: .sqlite(at: location, options: SQLiteOptions(busyTimeout: timeout))
        case .lmdb: .lmdb(at: location, options: LMDBOptions(busyTimeout: timeout))
        }
    }

    @Test("a save waiting for another process's write lock gets busy after the busy timeout", arguments: EngineKind.allCases)
    func boundedWait(kind: EngineKind) async throws {
        try LifetimeProbe.requireBuilt()
        let store = try TestStore(kind)
        let container = try PersistentContainer(schema: TestModels.schema, engine: Self.configuration(kind, store))
        let holder = try LifetimeProbe("hold-write-lock", engine: kind.rawValue, store: store.configuration.location)
        #expect(holder.nextLine() == "ok holding")
        let save = Task {
            let start = ContinuousClock.now
            let result: Result<Void, any Error>
            do {
                try await container.performUnitOfWork(retries: .none) { context in
                    Account(context: context).name = "blocked"
                    try context.save()
                }
                result = .success(())
            } catch {
                result = .failure(error)
            }
            return (result, ContinuousClock.now - start)
        }
        // Watchdog: a save that waits without bound is freed by killing the holder after 20 s.
        let watchdog = Task {
            try await Task.sleep(for: .seconds(20))
            holder.stop()
        }
        let (result, waited) = await save.value
        let watchdogFired = !holder.process.isRunning
        watchdog.cancel()
        holder.stop()
        print("waiting writer \(kind): busy timeout \(Self.timeout), the save returned after \(waited): \(result)")
        #expect(!watchdogFired, "the save waited without bound (freed by the watchdog after 20 s)")
        guard case .failure(StrataError.busy(let message)) = result else {
            Issue.record("expected .busy, got \(result)")
            return
        }
        #expect(waited >= Self.timeout, "busy came before the busy timeout: \(message)")
        // The lock is free again: the same save now succeeds.
        try await container.performUnitOfWork { context in
            Account(context: context).name = "after"
            try context.save()
        }
    }
}
