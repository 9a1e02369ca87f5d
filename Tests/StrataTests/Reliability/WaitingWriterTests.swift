import Foundation
import PostgresTestStores
import Strata
import StrataLMDB
import StrataPostgres
import StrataSQLite
import StrataTestSupport
import Testing

/// A writer waiting for another process's write lock gives up with `.busy` after the configured
/// busy timeout, on every engine, instead of waiting without bound.
@Suite("waiting writers", .serialized)
struct WaitingWriterTests {
    static let timeout = Duration.milliseconds(400)

    /// The store's configuration with `timeout` as its busy timeout (PostgreSQL: its lock
    /// timeout, which bounds a wait for another client's lock the same way).
    static func configuration(
        _ kind: EngineKind, _ store: TestStore, timeout: Duration = timeout
    ) -> EngineConfiguration {
        let location = store.configuration.location
        return switch kind {
        case .memory: store.configuration
        case .sqlite: .sqlite(at: location, options: SQLiteOptions(busyTimeout: timeout))
        case .lmdb: .lmdb(at: location, options: LMDBOptions(busyTimeout: timeout))
        case .postgres:
            TestPostgres.configuration(
                at: location, options: PostgresOptions(poolSize: queuedSaves + 2, lockTimeout: timeout))
        }
    }

    /// Another client holding the store's write lock: the probe process on the embedded engines;
    /// on PostgreSQL, a connection of this test holding every table of the store's schema in
    /// EXCLUSIVE mode (reads go on, every write waits), which is another server session all the same.
    static func holdWriteLock(_ kind: EngineKind, _ store: TestStore) throws -> any WriteLockHolder {
        guard kind == .postgres else {
            return try LifetimeProbe("hold-write-lock", engine: kind.rawValue, store: store.configuration.location)
        }
        return try PostgresWriteLockHolder(schema: store.postgresSchema)
    }

    /// The lock is held by another process (``EngineKind/sharedAcrossProcesses``): in another
    /// process an in-memory store's name is a store of its own.
    @Test(
        "a save waiting for another process's write lock gets busy after the busy timeout",
        arguments: EngineKind.sharedAcrossProcesses)
    func boundedWait(kind: EngineKind) async throws {
        try LifetimeProbe.requireBuilt()
        let store = try TestStore(kind)
        let container = try PersistentContainer(schema: TestModels.schema, engine: Self.configuration(kind, store))
        let holder = try Self.holdWriteLock(kind, store)
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
        let watchdogFired = !holder.isHolding
        watchdog.cancel()
        holder.stop()
        print("waiting writer \(kind): busy timeout \(Self.timeout), the save returned after \(waited): \(result)")
        #expect(!watchdogFired, "the save waited without bound (freed by the watchdog after 20 s)")
        guard case .failure(StrataError.busy(let message, _)) = result else {
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

    /// What one of the queued saves saw: whether it got `.busy`, the error, and how long
    /// `save()` took from the moment it was called.
    struct QueuedOutcome: Sendable {
        let busy: Bool
        let description: String
        let waited: Duration
    }

    static let queuedTimeout = Duration.milliseconds(500)
    static let queuedSaves = 10

    /// Another process holds the lock, as above (``EngineKind/sharedAcrossProcesses``).
    @Test(
        """
        saves queued in one process behind another process's write lock each get busy about the busy timeout \
        after they were asked
        """,
        arguments: EngineKind.sharedAcrossProcesses)
    func queuedSavesShareNoTimeout(kind: EngineKind) async throws {
        try LifetimeProbe.requireBuilt()
        let store = try TestStore(kind)
        let configuration = Self.configuration(kind, store, timeout: Self.queuedTimeout)
        let container = try PersistentContainer(schema: TestModels.schema, engine: configuration)
        // One account per save, saved beforehand: each queued save is then one commit of an
        // update, with no key reservation and no conflict with the others.
        let ids = try await container.performUnitOfWork { context in
            let accounts = (0..<Self.queuedSaves).map { index in
                let account = Account(context: context)
                account.name = "queued-\(index)"
                return account
            }
            try context.save()
            return accounts.map(\.objectID)
        }
        let holder = try Self.holdWriteLock(kind, store)
        #expect(holder.nextLine() == "ok holding")
        // Watchdog: saves that wait without bound are freed by killing the holder after 30 s.
        let watchdog = Task {
            try await Task.sleep(for: .seconds(30))
            holder.stop()
        }
        // All saves start at once; every one but the first queues behind this process's own
        // earlier saves, which wait for the holder.
        let outcomes = try await withThrowingTaskGroup(of: QueuedOutcome.self) { group in
            for (index, id) in ids.enumerated() {
                group.addTask {
                    try await container.performUnitOfWork(retries: .none) { context in
                        try context.existingObject(with: id, as: Account.self).name = "changed-\(index)"
                        let asked = ContinuousClock.now
                        do {
                            try context.save()
                            return QueuedOutcome(busy: false, description: "saved", waited: ContinuousClock.now - asked)
                        } catch {
                            let waited = ContinuousClock.now - asked
                            let busy = if case StrataError.busy = error { true } else { false }
                            return QueuedOutcome(busy: busy, description: String(describing: error), waited: waited)
                        }
                    }
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        let watchdogFired = !holder.isHolding
        watchdog.cancel()
        holder.stop()
        let waits = outcomes.map(\.waited).sorted()
        print(
            """
            queued waiting writers \(kind): busy timeout \(Self.queuedTimeout), \(outcomes.count) saves waited \
            \(waits)
            """
        )
        #expect(!watchdogFired, "saves waited without bound (freed by the watchdog after 30 s)")
        // Without a per-save deadline the k-th queued save waits about k busy timeouts (5 s for
        // the 10th); with one, each waits about one. The bound is loose on purpose.
        let bound = Self.queuedTimeout * 3 + .seconds(2)
        for outcome in outcomes {
            #expect(outcome.busy, "expected .busy, got \(outcome.description)")
            #expect(outcome.waited >= Self.queuedTimeout, "busy came before the busy timeout: \(outcome.description)")
            #expect(
                outcome.waited < bound,
                """
                a save waited \(outcome.waited), more than \(bound) for a busy timeout of \(Self.queuedTimeout): \
                \(outcome.description)
                """
            )
        }
        // The lock is free again: the saves now succeed.
        try await container.performUnitOfWork { context in
            for (index, id) in ids.enumerated() {
                try context.existingObject(with: id, as: Account.self).name = "after-\(index)"
            }
            try context.save()
        }
    }
}

/// Whoever holds a store's write lock in these tests: `nextLine()` says "ok holding" once it
/// does, `stop()` lets go, `isHolding` is false once it let go.
protocol WriteLockHolder: AnyObject, Sendable {
    func nextLine() -> String?
    func stop()
    var isHolding: Bool { get }
}

extension LifetimeProbe: WriteLockHolder {
    var isHolding: Bool { process.isRunning }
}

/// A PostgreSQL session holding every table of a store's schema in EXCLUSIVE mode inside an
/// open transaction, until `stop()` ends the session.
final class PostgresWriteLockHolder: WriteLockHolder, @unchecked Sendable {
    // Guarded by `lock`: `stop()` may come from the watchdog task.
    private var connection: PostgresSQL?
    private var error: (any Error)?
    private let lock = NSLock()

    init(schema: String) throws {
        let connection = try PostgresSQL()
        do {
            let tables = try connection.execute(
                "SELECT relname FROM pg_class WHERE relnamespace = $1::regnamespace AND relkind = 'r'", [schema])
            let names = tables.compactMap { $0.first ?? nil }.map {
                PostgresSQL.identifier(schema) + "." + PostgresSQL.identifier($0)
            }
            try connection.execute("BEGIN; LOCK TABLE \(names.joined(separator: ", ")) IN EXCLUSIVE MODE")
        } catch {
            self.error = error
        }
        self.connection = connection
    }

    func nextLine() -> String? {
        lock.withLock { error.map { "error \($0)" } ?? (connection == nil ? nil : "ok holding") }
    }

    func stop() { lock.withLock { connection = nil } }

    var isHolding: Bool { lock.withLock { connection != nil } }
}
