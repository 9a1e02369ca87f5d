import Foundation
import Strata
import StrataStorage
import Testing

@testable import StrataLMDB

/// The busy timeout bounds the whole wait of a write on LMDB, including the wait for this
/// process's earlier writes on the environment's one writer thread.
@Suite("LMDB writer wait")
struct LMDBWriterWaitTests {
    @Test(
        "with a zero or tiny busy timeout and nothing else writing, opening and every write succeed",
        arguments: [Duration.zero, .nanoseconds(1), .microseconds(1)])
    func tinyTimeoutUncontended(timeout: Duration) throws {
        let directory = LMDBFixture.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        // Opening a new store is itself a write (the catalog).
        let engine = try LMDBFixture.open(directory, options: LMDBOptions(busyTimeout: timeout))
        defer { engine.close() }
        for key in 1...200 {
            try LMDBFixture.insert(
                engine, LMDBFixture.account, Int64(key), [.text("a\(key)"), .integer(Int64(key)), .null])
        }
        let reader = try engine.makeReader()
        defer { reader.close() }
        #expect(try reader.count(entity: LMDBFixture.account, filter: nil) == 200)
    }

    @Test("a write still queued behind this process's earlier write at the busy timeout gets busy and never runs")
    func queuedPastTheTimeout() throws {
        let directory = LMDBFixture.directory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let opened = try LMDBFixture.open(directory, options: LMDBOptions(busyTimeout: .milliseconds(200)))
        defer { opened.close() }
        let engine = try #require(opened as? LMDBEngine)
        // An earlier job of this process keeps the writer thread busy until `release`.
        let holding = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)
        let writer = engine.environment.writer
        Thread {
            try? writer.perform(until: nil) {
                holding.signal()
                release.wait()
            }
            finished.signal()
        }.start()
        holding.wait()
        // Watchdog: a wait without bound is freed after 20 s; the write then runs and the
        // expectations below fail instead of the test hanging.
        let watchdog = DispatchWorkItem { release.signal() }
        DispatchQueue.global().asyncAfter(deadline: .now() + 20, execute: watchdog)
        let ran = RanFlag()
        let error = LMDBFixture.strataError { try engine.environment.write("queued write") { _ in ran.set() } }
        watchdog.cancel()
        release.signal()
        finished.wait()
        #expect(!ran.value, "the write ran after waiting for the writer thread past the busy timeout")
        guard case .busy(let message, _) = error else {
            Issue.record("expected .busy, got \(String(describing: error))")
            return
        }
        #expect(message.contains("earlier write(s) of this process") && message.contains("LMDBOptions.busyTimeout"))
        // The writer thread is free again: a write runs.
        try engine.environment.write("after") { _ in ran.set() }
        #expect(ran.value)
    }
}

/// Whether a job ran on the writer thread.
private final class RanFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var ran = false
    func set() { lock.withLock { ran = true } }
    var value: Bool { lock.withLock { ran } }
}
