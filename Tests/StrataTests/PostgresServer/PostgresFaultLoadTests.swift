import Foundation
import Ledger
import Strata
import StrataPostgres
import StrataTestSupport
import Testing

/// A sick server under the several-app-servers load, on a cluster of this test's own: 8 writer
/// processes move money through `TransactionService` with a 1 s statement timeout while the test
///
/// 1. stops every writer backend (SIGSTOP, the postmaster still running) for 3–5 s, several times:
///    a stalled disk, a swapping server. A `COMMIT` waiting in a stopped backend's socket is
///    applied when it resumes, after its client gave up;
/// 2. terminates the writers' backends again and again (`pg_terminate_backend`);
/// 3. stops the whole server, postmaster and every child, for longer than every timeout, while
///    probes in this process time each call.
///
/// Afterwards every transfer is checked by its note: acknowledged ones are stored exactly once,
/// failed ones whose error says nothing was written are not stored, those of unknown outcome once
/// or not at all, and none twice; balances add up; every probe call returned within the bound
/// Docs/Deploying.md gives.
@Suite("PostgreSQL: stopped backends, terminated backends and a stopped server under load")
struct PostgresFaultLoadTests {
    static let processes = 8
    /// The writers' and probes' statement and connect timeouts, and the probes' resolution window.
    static let statementTimeout: Duration = .seconds(1)
    static let connectTimeout: Duration = .seconds(2)
    static let checkoutTimeout: Duration = .seconds(2)
    static let probeResolution: Duration = .seconds(3)
    /// The writers settle lost commits for up to 10 s: longer than a stall, so they settle them all.
    static let writerResolution: Duration = .seconds(10)
    /// Stalls of the writers' backends (`STRATA_FAULT_ROUNDS` overrides, for longer measurements).
    static var stallRounds: Int {
        ProcessInfo.processInfo.environment["STRATA_FAULT_ROUNDS"].flatMap { Int($0) } ?? 3
    }

    /// The longest a probe call may take with the server stopped: a wait for a pooled connection,
    /// a new connection, the statement's deadline, the search for a lost commit's outcome, and the
    /// connect attempt in flight when that search runs out (Docs/Deploying.md).
    static var bound: Duration {
        checkoutTimeout + connectTimeout + statementTimeout + .seconds(2) + probeResolution + connectTimeout
    }

    @Test("8 processes: 0 transfers applied twice, 0 acknowledged lost, every probe call within the bound")
    func faultsUnderLoad() async throws {
        try #require(
            FileManager.default.isExecutableFile(atPath: CrashSafetyTests.writerURL.path),
            "build the strata-crash-writer product first (swift build)")
        let server = try await PrivatePostgresServer()
        let store = try TestStore(.postgres)
        let path = store.directory.appendingPathComponent("store.postgres")
        let stopFile = store.directory.appendingPathComponent("stop")
        let processes = try ServerProcesses(server: server)
        do {
            let bank = try await BankLoad(url: server.url, path: path)
            defer { bank.container.close() }
            let milliseconds = { (duration: Duration) in "\(duration.components.seconds * 1000)" }
            let writers = try bank.startWriters(
                Self.processes, transfers: 1_000_000, seed: 0xFA_0175,
                options: [
                    "--statement-timeout-ms", milliseconds(Self.statementTimeout), "--resolution-timeout-ms",
                    milliseconds(Self.writerResolution), "--connect-timeout-ms", milliseconds(Self.connectTimeout),
                    "--stop-file", stopFile.path,
                ])
            let acks: @Sendable () -> Int = { writers.map { $0.acknowledged.count / 2 }.reduce(0, +) }

            // 1 and 2, from a thread of its own (the test's task pool may be busy).
            let (schedule, _) = await runOnOwnThread { () -> [String] in
                var log: [String] = []
                var generator = SeededGenerator(seed: 0x5_7A11)
                let start = ContinuousClock.now
                while acks() < 50, ContinuousClock.now - start < .seconds(60) { Thread.sleep(forTimeInterval: 0.01) }
                for round in 0..<Self.stallRounds {
                    let hold = Double.random(in: 3...5, using: &generator)
                    let stopped = processes.stopWriterBackends()
                    Thread.sleep(forTimeInterval: hold)
                    processes.resume(stopped)
                    log.append("stall \(round + 1): \(stopped.count) backends for \(String(format: "%.1f", hold)) s")
                    Thread.sleep(forTimeInterval: 1)
                }
                var terminated = 0
                let terminating = ContinuousClock.now
                while ContinuousClock.now - terminating < .seconds(3) {
                    terminated += processes.terminateWriterBackends()
                    Thread.sleep(forTimeInterval: 0.2)
                }
                log.append("terminated \(terminated) backends in 3 s")
                return log
            }

            // 3: the whole server stops for 7 s while 4 probes time their calls.
            let probes = try Probes(url: server.url, path: path)
            defer { probes.container.close() }
            // Both timed from one origin on threads of their own, so a busy task pool delays neither.
            let origin = ContinuousClock.now
            let executor = OwnThreadExecutor(name: "strata-probes")
            defer { executor.finish() }
            let probing = Task(executorPreference: executor) { await probes.run(for: .seconds(12), from: origin) }
            let (stop, _) = await runOnOwnThread { () -> (processes: Int, at: Duration, resumed: Duration) in
                let wait = (origin + .seconds(2) - ContinuousClock.now).components
                Thread.sleep(forTimeInterval: Double(wait.seconds) + Double(wait.attoseconds) * 1e-18)
                let stopped = processes.stopServer()
                let at = ContinuousClock.now - origin
                Thread.sleep(forTimeInterval: 7)
                processes.resume(stopped)
                return (stopped.count, at, ContinuousClock.now - origin)
            }
            let whole = stop.processes
            let probeReport = await probing.value
            // The load goes on after the server is back, then stops.
            let resumedAt = acks()
            let waitLimit = ContinuousClock.now + .seconds(60)
            while acks() < resumedAt + 20, ContinuousClock.now < waitLimit {
                try await Task.sleep(for: .milliseconds(50))
            }
            _ = FileManager.default.createFile(atPath: stopFile.path, contents: nil)
            var ended: [Bool] = []
            for writer in writers { ended.append(await writer.wait(limit: .seconds(120))) }

            let failures = writers.map(\.failures).reduce(into: [String: Int]()) { $0.merge($1, uniquingKeysWith: +) }
            let once = try await bank.auditExactlyOnce(writers)
            let probeOnce = try await probes.audit(probeReport)
            let acknowledged = Set(writers.flatMap(\.acknowledged))
            let (_, problems) = try await bank.audit(acknowledged: acknowledged)
            let longest = probeReport.calls.map(\.duration).max() ?? .zero
            let writerLongest = writers.flatMap(\.callMilliseconds).max() ?? 0
            print(
                """
                faults under load: \(schedule.joined(separator: "; ")); whole server stopped (\(whole) processes) \
                for 7 s; \(acknowledged.count / 2) transfers acknowledged, failed by type \(failures); writers: \
                \(once); probes: \(probeReport.calls.count) calls, longest \(longest) (bound \(Self.bound)), \
                outcomes \(probeReport.kinds), \(probeOnce); longest writer call (with retries) \(writerLongest) ms; \
                server stopped at +\(stop.at), resumed at +\(stop.resumed); slowest probe calls: \(probeReport.slowest)
                """)
            print("faults under load, failures: \(writers.flatMap(\.failureLines).prefix(6))")
            #expect(ended.allSatisfy { $0 }, "a writer did not stop within 120 s: \(writers.map(\.diagnostics))")
            #expect(writers.flatMap(\.otherLines).isEmpty, "\(writers.flatMap(\.otherLines).prefix(3))")
            let untyped = failures.keys.filter { !["busy", "io", "retriesExhausted", "unknown"].contains($0) }
            #expect(untyped.isEmpty, "failures of other types: \(writers.flatMap(\.failureLines).prefix(5))")
            #expect(once.isClean, "\(once)")
            #expect(probeOnce.isEmpty, "\(probeOnce)")
            #expect(problems.isEmpty, "\(problems)")
            #expect(
                longest <= Self.bound,
                "a probe call took \(longest); the bound is \(Self.bound); slowest: \(probeReport.slowest)")
            #expect(probeReport.calls.contains { $0.duration > Self.statementTimeout }, "no probe call met the stop")
        }
        await server.stop()
    }

    /// Calls made from this process while the server is stopped, each timed: a transfer of 1 between
    /// two accounts (note "probe <n>") in a unit of work that is not retried.
    final class Probes: Sendable {
        let container: PersistentContainer

        struct Call: Sendable {
            var number: Int
            var outcome: String
            var duration: Duration
            /// When the call started, after the probes' start.
            var started: Duration
            /// The error's message, for a failed call.
            var message: String
        }

        struct Report: Sendable {
            var calls: [Call] = []
            /// The calls that took longest, with when they started and how they ended.
            var slowest: [String] {
                calls.sorted { $0.duration > $1.duration }.prefix(3).map {
                    "probe \($0.number) at +\($0.started) took \($0.duration): \($0.outcome) \($0.message.prefix(300))"
                }
            }
            var kinds: [String: Int] {
                calls.reduce(into: [:]) { $0[$1.outcome, default: 0] += 1 }
            }
        }

        init(url: String, path: URL) throws {
            var configuration = EngineConfiguration.postgres(
                url: url, schema: TestPostgres.schema(for: path),
                options: PostgresOptions(
                    poolSize: 8, connectTimeout: PostgresFaultLoadTests.connectTimeout,
                    statementTimeout: PostgresFaultLoadTests.statementTimeout,
                    checkoutTimeout: PostgresFaultLoadTests.checkoutTimeout,
                    commitResolutionTimeout: PostgresFaultLoadTests.probeResolution, applicationName: "strata-probe"))
            configuration.location = path
            container = try PersistentContainer(ledger: configuration)
        }

        /// 4 probes, each calling one after another for `duration` after `origin`. The test runs
        /// them on a thread of their own (``OwnThreadExecutor``): the suite's task pool may be busy
        /// with other tests, and its wait is not the call's.
        func run(for duration: Duration, from origin: ContinuousClock.Instant) async -> Report {
            let end = origin + duration
            return await withTaskGroup(of: [Call].self) { group in
                for probe in 0..<4 {
                    group.addTask {
                        var calls: [Call] = []
                        var number = probe * 1_000_000
                        while ContinuousClock.now < end {
                            number += 1
                            let started = ContinuousClock.now
                            let (outcome, message) = await self.transfer(number)
                            calls.append(
                                Call(
                                    number: number, outcome: outcome, duration: ContinuousClock.now - started,
                                    started: started - origin, message: message))
                            if outcome != "ack" { try? await Task.sleep(for: .milliseconds(100)) }
                        }
                        return calls
                    }
                }
                var report = Report()
                for await calls in group { report.calls += calls }
                return report
            }
        }

        private func transfer(_ number: Int) async -> (outcome: String, message: String) {
            do {
                try await container.performUnitOfWork(retries: .none) { context in
                    let accounts = try context.fetch(FetchRequest<Ledger.Account>(sortBy: [SortDescriptor(\.name)]))
                    for (account, amount) in [(accounts[0], Int64(-1)), (accounts[1], Int64(1))] {
                        let transaction = Ledger.Transaction(context: context)
                        transaction.amount = amount
                        transaction.note = "probe \(number)"
                        try account.post(transaction)
                    }
                    try context.save()
                }
                return ("ack", "")
            } catch {
                return (failureKind(error), "\(error)")
            }
        }

        /// The probes' transfers that break exactly-once: stored twice, acknowledged and missing,
        /// or failed with nothing written and stored.
        func audit(_ report: Report) async throws -> [String] {
            let context = container.newBackgroundContext()
            let stored = try await context.perform {
                try context.fetch(FetchRequest<Ledger.Transaction>()).reduce(into: [String: Int]()) {
                    $0[$1.note, default: 0] += 1
                }
            }
            return report.calls.compactMap { call in
                let rows = stored["probe \(call.number)"] ?? 0
                if rows > 2 { return "probe \(call.number): \(rows) rows" }
                if call.outcome == "ack" && rows != 2 { return "probe \(call.number) acknowledged, \(rows) rows" }
                if call.outcome != "ack" && call.outcome != "unknown" && rows != 0 {
                    return "probe \(call.number) failed (\(call.outcome)), \(rows) rows"
                }
                return nil
            }
        }
    }
}
