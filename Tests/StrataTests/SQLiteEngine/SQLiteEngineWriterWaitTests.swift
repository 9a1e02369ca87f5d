import Foundation
import Strata
import Testing

@testable import StrataSQLite

/// The busy timeout bounds the whole wait of a write on SQLite, including the wait for this
/// process's earlier writes to hand over the one writer connection.
@Suite("SQLiteEngine writer wait")
struct SQLiteEngineWriterWaitTests {
    /// Holds the engine's writer connection on another thread until `release` is signalled;
    /// returns once it holds it.
    static func holdWriter(_ engine: SQLiteEngine, until release: DispatchSemaphore) -> Thread {
        let holding = DispatchSemaphore(value: 0)
        let thread = Thread {
            try? engine.withWriter { _ in
                holding.signal()
                release.wait()
            }
        }
        thread.start()
        holding.wait()
        return thread
    }

    /// `PRAGMA busy_timeout` of the writer connection, read as a write.
    static func busyTimeout(_ engine: SQLiteEngine) throws -> Int64? {
        try engine.withWriter { (connection) throws(StrataError) -> Int64? in
            try connection.queryInt64("PRAGMA busy_timeout")
        }
    }

    @Test("a write still waiting for this process's earlier write at the busy timeout gets busy and never runs")
    func queuedPastTheTimeout() throws {
        let store = try TemporarySQLiteStore()
        let opened = try store.open(options: SQLiteOptions(busyTimeout: .milliseconds(200)))
        defer { opened.close() }
        let engine = try #require(opened as? SQLiteEngine)
        let release = DispatchSemaphore(value: 0)
        _ = Self.holdWriter(engine, until: release)
        // Watchdog: a wait without bound is freed after 20 s; the write then runs and the
        // expectations below fail instead of the test hanging.
        let watchdog = DispatchWorkItem { release.signal() }
        DispatchQueue.global().asyncAfter(deadline: .now() + 20, execute: watchdog)
        var ran = false
        let error = strataError { try engine.withWriter { _ in ran = true } }
        watchdog.cancel()
        release.signal()
        #expect(!ran, "the write ran after waiting for the writer past the busy timeout")
        guard case .busy(let message, _) = error else {
            Issue.record("expected .busy, got \(String(describing: error))")
            return
        }
        #expect(message.contains("earlier writes of this process") && message.contains("SQLiteOptions.busyTimeout"))
        // The writer is free again: a write runs.
        try engine.withWriter { _ in ran = true }
        #expect(ran)
    }

    @Test("a write that waited for this process's earlier write gives SQLite's busy handler only the time left")
    func busyHandlerGetsTheTimeLeft() throws {
        let store = try TemporarySQLiteStore()
        let opened = try store.open(options: SQLiteOptions(busyTimeout: .seconds(10)))
        defer { opened.close() }
        let engine = try #require(opened as? SQLiteEngine)
        let full: Int64 = 10_000
        #expect(try Self.busyTimeout(engine) == full)
        // The write below waits for the holder unless it is descheduled for the holder's whole
        // 50 ms; a try without a wait proves nothing, so up to 20 tries are made.
        var left: Int64?
        for _ in 0..<20 {
            let release = DispatchSemaphore(value: 0)
            let asking = DispatchSemaphore(value: 0)
            _ = Self.holdWriter(engine, until: release)
            // A thread of its own, not a global queue's: under load (other tests blocking the
            // queue's few workers) a queued release could wait past the busy timeout.
            Thread {
                asking.wait()
                usleep(50_000)
                release.signal()
            }.start()
            asking.signal()
            let set = try Self.busyTimeout(engine)
            if let set, set < full {
                left = set
                break
            }
        }
        let time = try #require(
            left,
            "in 20 tries, a write that waited for the writer still gave SQLite's busy handler the whole busy timeout")
        #expect(time > 0)
        // The next write, with no wait, gets the whole busy timeout back.
        #expect(try Self.busyTimeout(engine) == full)
    }

    @Test(
        "any busy timeout, from negative to the largest Duration, opens and writes without a trap",
        arguments: [
            Duration.seconds(-1), .zero, .nanoseconds(1), .milliseconds(1.5), .seconds(10_000_000_000),
            .seconds(Int64.max),
        ])
    func extremeTimeouts(_ timeout: Duration) throws {
        let store = try TemporarySQLiteStore()
        let engine = try store.open(options: SQLiteOptions(busyTimeout: timeout))
        defer { engine.close() }
        try engine.commit(Fixtures.inserts([Fixtures.account(1, "Any timeout")]))
        #expect(try allRows(engine, Fixtures.account).count == 1)
    }
}
