import Foundation
import Strata
import StrataSQLite
import StrataTestSupport
import Testing

/// Another process holds the store's write lock (`strata-probe sqlite-hold-write`): a write that
/// waits past the busy timeout ends in `.busy`, never `.storeCorrupt`, with a message that says
/// what to do, and the store works again once the lock is released.
@Suite("SQLiteEngine busy store")
struct SQLiteEngineBusyTests {
    /// The probe built next to the test binary.
    static var probeURL: URL {
        URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
            .appendingPathComponent("strata-probe")
    }

    /// Starts `sqlite-hold-write` on the store and returns once the probe holds the lock.
    static func holdWriteLock(_ store: TemporarySQLiteStore, millis: Int) throws -> SpawnedProcess {
        let process = SpawnedProcess()
        process.executableURL = probeURL
        process.arguments = ["sqlite-hold-write", "--store", store.path, "--millis", String(millis)]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        // Blocking reads until the first line; the probe exits by itself after `millis`.
        var text = ""
        while !text.contains("\n") {
            let data = output.fileHandleForReading.availableData
            if data.isEmpty { break }
            text += String(decoding: data, as: UTF8.self)
        }
        guard text.hasPrefix("ok holding") else {
            process.terminate()
            process.waitUntilExit()
            throw StrataError.io("the probe did not take the write lock: \(text)")
        }
        return process
    }

    @Test func aWriteBlockedPastTheBusyTimeoutIsBusyAndSaysWhatToDo() throws {
        try #require(
            FileManager.default.isExecutableFile(atPath: Self.probeURL.path),
            "build the strata-probe product first (swift build)")
        let store = try TemporarySQLiteStore()
        let options = SQLiteOptions(busyTimeout: .milliseconds(100))
        let engine = try store.open(options: options)
        defer { engine.close() }
        try engine.commit(Fixtures.inserts([Fixtures.account(1, "Before")]))

        // The probe holds the lock far longer than the timeout; it is stopped below.
        let holder = try Self.holdWriteLock(store, millis: 20_000)
        defer {
            if holder.isRunning { holder.terminate() }
            holder.waitUntilExit()
        }
        let error = strataError { try engine.commit(Fixtures.inserts([Fixtures.account(2, "Blocked")])) }
        guard case .busy(let detail, let native) = error else {
            Issue.record("a write blocked by another process gave \(String(describing: error))")
            return
        }
        #expect(detail.contains(store.path) && detail.contains("busy timeout"))
        // The cause is SQLITE_BUSY (5) or one of its extended codes, on the write's BEGIN.
        #expect(native?.engine == "sqlite" && native.map { $0.code & 0xFF } == 5, "\(String(describing: native))")
        #expect(native?.sql == "BEGIN IMMEDIATE", "\(String(describing: native))")
        #expect(
            error?.description.contains("sqlite code \(native?.code ?? 0) \"database is locked\"") == true,
            "\(String(describing: error))")
        #expect(error?.description.contains("Nothing was changed; retry later.") == true)
        // Opening the store also takes the write lock briefly: busy as well, not damage.
        guard case .busy = strataError({ _ = try store.open(options: options) }) else {
            Issue.record("opening a store whose write lock is held did not give busy")
            return
        }
        // Reads are not blocked (WAL).
        #expect(try allRows(engine, Fixtures.account).count == 1)

        holder.terminate()
        holder.waitUntilExit()
        // The lock died with the process: the same engine writes again.
        try engine.commit(Fixtures.inserts([Fixtures.account(2, "After")]))
        #expect(try allRows(engine, Fixtures.account).count == 2)
    }
}
