import Foundation
import StrataTestSupport
import Testing

extension LedgerTests {
    /// `ledger watch` in one process shows, live, what `ledger` commands in other processes commit
    /// to the same store, and ends cleanly on SIGINT or SIGTERM. Serialized: a child process
    /// inherits the other running children's pipes, so concurrent watchers would hold each
    /// other's output open.
    ///
    /// The `ledger` executable is another process on the store: the engines it shares
    /// (``EngineKind/sharedAcrossProcesses``); an in-memory store lives in this process only.
    @Suite("ledger CLI: watch shows other processes' changes live", .serialized)
    struct LedgerCLIWatchTests {
        @Test(
            "ledger watch prints a transfer made by a second ledger process as it happens; SIGINT ends it, status 0",
            arguments: EngineKind.sharedAcrossProcesses)
        func watchShowsAnotherProcessTransfer(kind: EngineKind) async throws {
            let binary = try LedgerCLIMigrationTests.ledgerBinary()
            let store = try TestStore(kind)
            let options = LedgerCLIMigrationTests.options(kind, store)
            try await Self.openAccounts(binary, options)

            let watch = try WatchProcess(binary, options + ["watch"], in: store)
            // The watcher has its start token once it says so: everything committed after is shown.
            try #require(
                await watch.waitForLine { $0.hasPrefix("Watching the ledger at ") } != nil, "\(watch.transcript)")
            try await Self.ledger(binary, options + ["transfer", "Checking", "Savings", "200", "Rainy day"])
            try #require(await watch.waitForLine { $0.contains("Savings") } != nil, "\(watch.transcript)")
            try await Self.ledger(binary, options + ["add", "Savings", "-20", "Coffee"])
            try #require(await watch.waitForLine { $0.contains("Coffee") } != nil, "\(watch.transcript)")

            let changes = watch.changeLines
            #expect(
                changes.map(\.text) == [
                    "Checking  -200.00 USD  balance 1,300.00 USD  \"Rainy day\"",
                    "Savings  +200.00 USD  balance 200.00 USD  \"Rainy day\"",
                    "Savings  -20.00 USD  balance 180.00 USD  \"Coffee\"",
                ], "\(watch.transcript)")
            // The transfer is one commit; the add is the next one.
            let tokens = changes.map(\.token)
            #expect(tokens.count == 3 && tokens[0] == tokens[1] && tokens[2] == tokens[1] + 1, "\(tokens)")

            let end = await watch.stop(signal: SIGINT)
            #expect(end.reason == .exit && end.status == 0, "\(end) \(watch.transcript)")
            #expect(watch.lines.last == "Stopped. Resume with: ledger watch --after \(tokens.last ?? -1)")
        }

        @Test(
            "ledger watch --from-start replays the history and --after resumes where it stopped; SIGTERM ends it",
            arguments: EngineKind.sharedAcrossProcesses)
        func watchReplaysAndResumes(kind: EngineKind) async throws {
            let binary = try LedgerCLIMigrationTests.ledgerBinary()
            let store = try TestStore(kind)
            let options = LedgerCLIMigrationTests.options(kind, store)
            try await Self.openAccounts(binary, options)
            try await Self.ledger(binary, options + ["transfer", "Checking", "Savings", "200", "Rainy day"])

            let replay = try WatchProcess(binary, options + ["watch", "--from-start"], in: store)
            try #require(
                await replay.waitForLine { $0.contains("Savings  +200.00") } != nil, "\(replay.transcript)")
            let end = await replay.stop(signal: SIGTERM)
            #expect(end.reason == .exit && end.status == 0, "\(end) \(replay.transcript)")
            #expect(
                replay.changeLines.map(\.text) == [
                    "Checking  opened  balance 1,500.00 USD",
                    "Savings  opened  balance 0.00 USD",
                    "Checking  -200.00 USD  balance 1,300.00 USD  \"Rainy day\"",
                    "Savings  +200.00 USD  balance 200.00 USD  \"Rainy day\"",
                ], "\(replay.transcript)")
            let stopped = try #require(replay.lines.last, "\(replay.transcript)")
            let resumeToken = try #require(
                stopped.wholeMatch(of: /Stopped\. Resume with: ledger watch --after ([0-9]+)/).flatMap { Int64($0.1) },
                "\(replay.transcript)")
            #expect(resumeToken == replay.changeLines.last?.token)

            // Committed while nobody watches, then seen by a watcher resuming after the token.
            try await Self.ledger(binary, options + ["transfer", "Savings", "Checking", "50", "Back"])
            let resumed = try WatchProcess(binary, options + ["watch", "--after", String(resumeToken)], in: store)
            try #require(await resumed.waitForLine { $0.contains("Checking  +50.00") } != nil, "\(resumed.transcript)")
            #expect(await resumed.stop(signal: SIGTERM).status == 0)
            #expect(
                resumed.changeLines.map(\.text) == [
                    "Savings  -50.00 USD  balance 150.00 USD  \"Back\"",
                    "Checking  +50.00 USD  balance 1,350.00 USD  \"Back\"",
                ], "\(resumed.transcript)")

            let badToken = try await BenchmarkBinary.run(binary, options + ["watch", "--after", "soon"])
            #expect(badToken.status == 64 && badToken.errorOutput.contains("--after needs a token"))
            // A token past the store's last commit is refused, not waited for (the watchdog ends a wait).
            let future = try WatchProcess(binary, options + ["watch", "--after", "999"], in: store)
            #expect(await future.finish().status == 65, "\(future.transcript)")
            #expect(future.transcript.contains("past this store's last commit"), "\(future.transcript)")
            let both = try await BenchmarkBinary.run(binary, options + ["watch", "--from-start", "--after", "3"])
            #expect(both.status == 64 && both.errorOutput.contains("not both"), "\(both.errorOutput)")
        }

        /// The server behind a PostgreSQL store stops for 8 seconds (longer than the engine's 5-second
        /// connect retry) while `ledger watch` follows it, and comes back: the watcher goes on by
        /// itself, so a commit made after the outage is printed once and nothing before it twice,
        /// and SIGINT still ends it with status 0. (Several layers ride out the outage: the LISTEN
        /// connection reconnects, the history stream polls through a `.busy` store, and a `.busy`
        /// read makes the watcher resume after the last token it printed; disabling either of
        /// the first two alone still passes.) On a cluster of this test's own
        /// (``PrivatePostgresServer``), so the outage cuts off no other test; stopping a server
        /// exists only for the server engine.
        @Test("ledger watch on PostgreSQL resumes after the server was down: no change missed or printed twice")
        func watchResumesAfterServerRestart() async throws {
            let binary = try LedgerCLIMigrationTests.ledgerBinary()
            let server = try await PrivatePostgresServer()
            let store = try TestStore(.postgres)
            do {
                let options = ["--engine", "postgres", "--store", server.url, "--schema", store.postgresSchema]
                try await Self.openAccounts(binary, options)

                let watch = try WatchProcess(binary, options + ["watch"], in: store)
                try #require(
                    await watch.waitForLine { $0.hasPrefix("Watching the ledger at ") } != nil, "\(watch.transcript)")
                try await Self.ledger(binary, options + ["transfer", "Checking", "Savings", "200", "Before"])
                try #require(await watch.waitForLine { $0.contains("Before") } != nil, "\(watch.transcript)")

                // Down long enough for the watcher's next read to fail, then up again where it was
                // (pg_ctl's start needs the port and socket directory the script gave it).
                let query = URLComponents(string: server.url)?.queryItems ?? []
                let socketDirectory = try #require(query.first { $0.name == "host" }?.value, "\(server.url)")
                let port = try #require(query.first { $0.name == "port" }?.value, "\(server.url)")
                let stopped = await server.control("stop -m fast -w -t 60")
                try #require(stopped == 0, "pg_ctl stop failed with status \(stopped)")
                try await Task.sleep(for: .seconds(8))
                let started = await server.control(
                    "start -w -t 60 -o \"-p \(port) -k \(socketDirectory) -c listen_addresses=''\"")
                try #require(started == 0, "pg_ctl start failed with status \(started)")
                try await Self.ledger(binary, options + ["transfer", "Savings", "Checking", "50", "After"])
                try #require(
                    await watch.waitForLine { $0.contains("Checking  +50.00") } != nil, "\(watch.transcript)")

                let end = await watch.stop(signal: SIGINT)
                #expect(end.reason == .exit && end.status == 0, "\(end) \(watch.transcript)")
                #expect(
                    watch.changeLines.map(\.text) == [
                        "Checking  -200.00 USD  balance 1,300.00 USD  \"Before\"",
                        "Savings  +200.00 USD  balance 200.00 USD  \"Before\"",
                        "Savings  -50.00 USD  balance 150.00 USD  \"After\"",
                        "Checking  +50.00 USD  balance 1,350.00 USD  \"After\"",
                    ], "\(watch.transcript)")
            } catch {
                await server.stop()
                throw error
            }
            await server.stop()
        }

        /// `ledger watch` started as a non-interactive shell starts a background job, with SIGINT
        /// ignored, and sent SIGINT before it prints anything: it still stops, says where to resume
        /// and exits 0, at once (the watchdog ends a watch that missed the signal after 30 s).
        ///
        /// The shell ignores SIGINT (`trap '' INT`), sends it to itself and `exec`s ledger, which
        /// so starts with SIGINT ignored and one pending: the child starts with SIGINT blocked,
        /// since a signal sent to a process that ignores it and does not block it is discarded
        /// when sent, and no program can take it then. Blocked, it waits for the watch to take it;
        /// a watch that set SIGINT to "ignore" itself (as it did, before handing it to a dispatch
        /// source) discarded it. Then once more without blocking, sent as soon as the watch says
        /// it is watching: the handler is in place by then (the dispatch source was not always).
        @Test(
            "ledger watch with SIGINT ignored by its parent takes a SIGINT sent before it printed anything: status 0",
            arguments: EngineKind.sharedAcrossProcesses)
        func watchTakesAnEarlySIGINT(kind: EngineKind) async throws {
            let binary = try LedgerCLIMigrationTests.ledgerBinary()
            let store = try TestStore(kind)
            let options = LedgerCLIMigrationTests.options(kind, store)
            try await Self.openAccounts(binary, options)

            for round in 1...3 {
                let watch = try WatchProcess(
                    binary, options + ["watch"], in: store, shellPrelude: "trap '' INT; kill -INT $$",
                    blockedSignals: [SIGINT], watchdogSeconds: 30)
                let end = await watch.finish()
                #expect(end.reason == .exit && end.status == 0, "round \(round): \(end) \(watch.transcript)")
                #expect(watch.lines.count == 2 && watch.lines[0].hasPrefix("Watching the ledger at "))
                #expect(watch.lines.last == "Stopped. Resume with: ledger watch --after 2", "\(watch.transcript)")
            }

            let watch = try WatchProcess(
                binary, options + ["watch"], in: store, shellPrelude: "trap '' INT", watchdogSeconds: 30)
            try #require(
                await watch.waitForLine { $0.hasPrefix("Watching the ledger at ") } != nil, "\(watch.transcript)")
            let end = await watch.stop(signal: SIGINT)
            #expect(end.reason == .exit && end.status == 0, "\(end) \(watch.transcript)")
            #expect(watch.lines.last == "Stopped. Resume with: ledger watch --after 2", "\(watch.transcript)")
        }

        /// Makes the ledger store and its two accounts: Checking opened with 1,500.00, and Savings.
        static func openAccounts(_ binary: URL, _ options: [String]) async throws {
            try await ledger(binary, options + ["init"])
            try await ledger(binary, options + ["account", "add", "Checking", "--opening", "1500"])
            try await ledger(binary, options + ["account", "add", "Savings"])
        }

        /// Runs a `ledger` command to completion and requires it to succeed.
        @discardableResult
        static func ledger(_ binary: URL, _ arguments: [String]) async throws -> String {
            let run = try await BenchmarkBinary.run(binary, arguments)
            try #require(run.status == 0, "ledger \(arguments.joined(separator: " ")) failed: \(run.errorOutput)")
            return run.output
        }
    }
}

/// A running `ledger watch` whose standard output the test reads line by line as it comes (its
/// standard error goes to a file in the store's directory).
///
/// A watchdog kills it after two minutes (or the time it is given), so a watcher that never
/// prints what the test waits for ends the wait (the reads reach the end of the output) and the
/// test fails with the transcript instead of hanging. That bound asserts nothing about speed.
final class WatchProcess {
    private let process = SpawnedProcess()
    private let output = Pipe()
    private let errorLog: URL
    private let watchdog: DispatchWorkItem
    private var pending = Data()
    /// Every complete line printed so far.
    private(set) var lines: [String] = []

    /// Starts `binary` with `arguments`; with a `shellPrelude`, `/bin/sh` runs that first and then
    /// `exec`s the binary (so the binary keeps what the prelude set, an ignored signal, and its
    /// process ID). It starts with `blockedSignals` blocked, and is killed after
    /// `watchdogSeconds`.
    init(
        _ binary: URL, _ arguments: [String], in store: TestStore, shellPrelude: String? = nil,
        blockedSignals: [Int32] = [], watchdogSeconds: Double = 120
    ) throws {
        errorLog = store.directory.appendingPathComponent("watch-\(UUID().uuidString).stderr")
        try Data().write(to: errorLog)
        if let shellPrelude {
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", shellPrelude + "; exec \"$0\" \"$@\"", binary.path] + arguments
        } else {
            process.executableURL = binary
            process.arguments = arguments
        }
        process.blockedSignals = blockedSignals
        process.standardOutput = output
        let errorHandle = try FileHandle(forWritingTo: errorLog)
        process.standardError = errorHandle
        try process.run()
        try errorHandle.close()
        let pid = process.processIdentifier
        watchdog = DispatchWorkItem { kill(pid, SIGKILL) }
        DispatchQueue.global().asyncAfter(deadline: .now() + watchdogSeconds, execute: watchdog)
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
        watchdog.cancel()
    }

    /// The change lines (`#TOKEN HH:MM:SS  text`), split into token and text.
    var changeLines: [(token: Int64, text: String)] {
        lines.compactMap { line in
            guard let match = line.wholeMatch(of: /#([0-9]+) [0-9:]+Z?  (.*)/), let token = Int64(match.1) else {
                return nil
            }
            return (token, String(match.2))
        }
    }

    /// What it printed, for failure messages.
    var transcript: String {
        let errorText = (try? String(contentsOf: errorLog, encoding: .utf8)) ?? ""
        return "stdout:\n" + lines.joined(separator: "\n") + "\nstderr:\n" + errorText
    }

    /// Reads until a line matching `predicate` has been printed and returns it; nil when the
    /// output ends first (the watcher exited or was killed). Each read blocks a thread of its
    /// own (``Blocking``), not the test's.
    func waitForLine(_ predicate: (String) -> Bool) async -> String? {
        let reading = output.fileHandleForReading
        while true {
            if let line = lines.first(where: predicate) { return line }
            let chunk = (try? await Blocking.run { reading.availableData }) ?? Data()
            if chunk.isEmpty { return nil }
            pending += chunk
            while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                lines.append(String(decoding: pending[pending.startIndex..<newline], as: UTF8.self))
                pending = Data(pending[(newline + 1)...])
            }
        }
    }

    /// Reads the output to its end and waits for the process to exit by itself.
    func finish() async -> (reason: SpawnedProcess.TerminationReason, status: Int32) {
        _ = await waitForLine { _ in false }
        await Blocking.waitForExit(process)
        watchdog.cancel()
        return (process.terminationReason, process.terminationStatus)
    }

    /// Sends `signal`, reads the output up to the watcher's last line ("Stopped. …", or the end of
    /// the output if it never says it) and waits for the process to end.
    func stop(signal: Int32) async -> (reason: SpawnedProcess.TerminationReason, status: Int32) {
        kill(process.processIdentifier, signal)
        _ = await waitForLine { $0.hasPrefix("Stopped.") }
        await Blocking.waitForExit(process)
        watchdog.cancel()
        return (process.terminationReason, process.terminationStatus)
    }
}
