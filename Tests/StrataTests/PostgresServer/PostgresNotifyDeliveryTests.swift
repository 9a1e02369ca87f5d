import Foundation
import StrataStorage
import StrataTestSupport
import Synchronization
import Testing

@testable import Strata
@testable import StrataPostgres

/// Change delivery by LISTEN/NOTIFY (design notes §10.4): with the hub's fallback poll made
/// long, a commit of another container (another engine, other connections) reaches an observer
/// through the notification; a listener connection the server drops falls back to polling and
/// comes back. Serialized: the fallback interval is a process-wide knob.
@Suite("PostgreSQL change delivery by notification", .serialized)
struct PostgresNotifyDeliveryTests {
    /// Long enough that a delivery within `prompt` cannot come from the fallback poll.
    static let longFallback: Duration = .seconds(120)
    /// Not a speed requirement: a bound far below the fallback poll, so that a delivery within it
    /// came from the notification, and far above a loaded machine's scheduling delays (CI once
    /// took over 2 s for one delivery while the suite ran on three engines).
    static let prompt: Duration = .seconds(30)

    /// The tokens an observer received, in order.
    final class Received: Sendable {
        let tokens = Mutex<[HistoryToken]>([])
        var count: Int { tokens.withLock { $0.count } }
    }

    /// Observes `observed` into `received` until cancelled.
    static func observe(_ observed: PersistentContainer, into received: Received) -> Task<Void, any Error> {
        let changes = observed.changes()
        return Task {
            for try await transaction in changes { received.tokens.withLock { $0.append(transaction.token) } }
        }
    }

    /// Saves one account through `writer`.
    static func commit(_ writer: PersistentContainer, _ name: String) async throws {
        let context = writer.newBackgroundContext()
        try await context.perform {
            Account(context: context).name = name
            try context.save()
        }
    }

    /// Waits (without blocking a thread) until `condition` holds or `limit` passes; the time taken.
    static func waitUntil(
        _ limit: Duration, _ condition: () -> Bool
    ) async throws -> Duration? {
        let start = ContinuousClock.now
        while start.duration(to: .now) < limit {
            if condition() { return start.duration(to: .now) }
            try await Task.sleep(for: .milliseconds(2))
        }
        return condition() ? start.duration(to: .now) : nil
    }

    static func listener(of container: PersistentContainer) throws -> PostgresNotifications {
        let engine = try #require(container.changeHub?.engine as? PostgresEngine)
        return engine.notifications
    }

    /// Sets the hub's fallback poll to ``longFallback``; returns the previous value.
    static func lengthenFallback() -> Duration {
        ChangeHub.fallbackPollInterval.withLock { interval in
            defer { interval = longFallback }
            return interval
        }
    }

    static func restoreFallback(_ saved: Duration) {
        ChangeHub.fallbackPollInterval.withLock { $0 = saved }
    }

    /// Runs one query on a connection of the tests' own (short: never across an await).
    static func query(_ sql: String) throws -> String? {
        try PostgresSQL().execute(sql).first?.first ?? nil
    }

    /// Opens a store twice (an observed container and a writer, each with its own engine and
    /// connections) with the fallback poll made long, observes the first, commits a warm-up
    /// (the first delivery may come from the poll while the listener connects) and waits for
    /// the listener's connection; then runs `body` with the writer, what the observer received
    /// (the warm-up's token first) and the observed engine's listener.
    static func withListeningObserver(
        _ body: (PersistentContainer, Received, PostgresNotifications) async throws -> Void
    ) async throws {
        let saved = lengthenFallback()
        defer { restoreFallback(saved) }
        let store = try TestStore(.postgres)
        let observed = try store.open()
        let writer = try store.open()
        defer {
            observed.close()
            writer.close()
        }
        let received = Received()
        let observer = observe(observed, into: received)
        defer { observer.cancel() }
        try await commit(writer, "warm-up")
        // `prompt`, not less: nothing is measured yet, and on a loaded machine (the suite on
        // every engine at once) the warm-up once took over 10 s to arrive.
        try #require(try await waitUntil(prompt) { received.count == 1 } != nil, "the warm-up was not delivered")
        let listener = try listener(of: observed)
        try #require(
            try await waitUntil(prompt) { listener.listenerBackendPID != nil } != nil,
            "the listener did not connect")
        try await body(writer, received, listener)
    }

    @Test("a commit from another container is delivered by notification, long before the fallback poll")
    func deliveredByNotification() async throws {
        try await Self.withListeningObserver { writer, received, _ in
            var latencies: [Duration] = []
            for index in 1...5 {
                try await Self.commit(writer, "a\(index)")
                let latency = try await Self.waitUntil(Self.prompt) { received.count == index + 1 }
                #expect(latency != nil, "commit \(index) was not delivered within \(Self.prompt)")
                if let latency { latencies.append(latency) }
            }
            let tokens = received.tokens.withLock { $0 }
            #expect(tokens == tokens.sorted() && Set(tokens).count == 6)
            let milliseconds = latencies.map {
                Double($0.components.seconds) * 1000 + Double($0.components.attoseconds) / 1e15
            }
            print("commit → delivery by notification (ms): \(milliseconds)")
        }
    }

    @Test("a listener connection the server drops falls back to polling, reconnects and delivers again")
    func droppedListenerRecovers() async throws {
        try await Self.withListeningObserver { writer, received, listener in
            let first = try #require(listener.listenerBackendPID)
            #expect(try Self.query("SELECT pg_terminate_backend(\(first))") == "t")
            // While it is down (or reconnecting), commits are still delivered promptly.
            try await Self.commit(writer, "while down")
            #expect(try await Self.waitUntil(Self.prompt) { received.count == 2 } != nil)
            let recovered = try await Self.waitUntil(.seconds(10)) {
                listener.listenerBackendPID.map { $0 != first } ?? false
            }
            #expect(recovered != nil, "the listener did not reconnect")
            for index in 1...3 {
                try await Self.commit(writer, "after \(index)")
                #expect(try await Self.waitUntil(Self.prompt) { received.count == 2 + index } != nil)
            }
            let pid = listener.listenerBackendPID ?? -1
            #expect(
                try Self.query("SELECT count(*) FROM pg_stat_activity WHERE pid = \(pid) AND query LIKE 'LISTEN%'")
                    == "1")
        }
    }
}
