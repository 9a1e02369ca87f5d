import Foundation
import Strata
import StrataTestSupport
import Synchronization
import Testing

/// The server restarts (`pg_ctl restart -m fast`) in the middle of the several-app-servers load,
/// on a cluster of this test's own: operations in flight fail with typed errors (`.busy`, `.io`,
/// or retries exhausted on them) or succeed, every acknowledged transfer is stored afterwards,
/// and the writer processes go on without being restarted.
@Suite("PostgreSQL: server restart under load")
struct PostgresRestartTests {
    static let processes = 4
    static let transfersEach = 500

    @Test("pg_ctl restart -m fast under 4 writer processes: typed failures, no lost commit, recovery")
    func restartUnderLoad() async throws {
        try #require(
            FileManager.default.isExecutableFile(atPath: CrashSafetyTests.writerURL.path),
            "build the strata-crash-writer product first (swift build)")
        let server = try await PrivatePostgresServer()
        let store = try TestStore(.postgres)
        let path = store.directory.appendingPathComponent("store.postgres")
        do {
            let bank = try await BankLoad(url: server.url, path: path)
            defer { bank.container.close() }
            let writers = try bank.startWriters(Self.processes, transfers: Self.transfersEach, seed: 0x8E57_A87)
            let stop = StopSignal()
            async let reading = bank.readUntil(stop)

            // Restart once a quarter of the transfers were acknowledged. Watched and restarted from
            // a thread of its own: a task's sleep ends when the test's busy pool has a thread free,
            // which once came after the writers had finished all 2,000 transfers.
            let quarter = Self.processes * Self.transfersEach / 4
            let ((before, restartBegan, status, restartEnded), _) = await runOnOwnThread {
                let waitLimit = ContinuousClock.now + .seconds(120)
                while writers.map({ $0.acknowledged.count / 2 }).reduce(0, +) < quarter, ContinuousClock.now < waitLimit
                {
                    Thread.sleep(forTimeInterval: 0.005)
                }
                let before = writers.map { $0.acknowledged.count / 2 }.reduce(0, +)
                let began = ContinuousClock.now
                let status = server.controlBlocking("restart -m fast -w -t 60")
                return (before, began, status, ContinuousClock.now)
            }

            var ended: [Bool] = []
            for writer in writers { ended.append(await writer.wait(limit: .seconds(300))) }
            stop.stop()
            let reader = await reading

            let acknowledged = Set(writers.flatMap(\.acknowledged))
            let failures = writers.map(\.failures).reduce(into: [String: Int]()) { $0.merge($1, uniquingKeysWith: +) }
            // Recovery: per process, from the restart's start to its first acknowledgement after
            // pg_ctl returned (the server is up again then).
            let recoveries = writers.map { writer in
                writer.lines.first { $0.line.hasPrefix("ack ") && $0.at > restartEnded }.map { $0.at - restartBegan }
            }
            let (stored, problems) = try await bank.audit(acknowledged: acknowledged)
            let once = try await bank.auditExactlyOnce(writers)
            let unknown = failures["unknown"] ?? 0
            print(
                """
                server restart: pg_ctl restart -m fast (exit \(status)) after \(before) acknowledged transfers took \
                \(restartEnded - restartBegan); \(acknowledged.count / 2) of \
                \(Self.processes * Self.transfersEach) transfers acknowledged, failed by type \(failures); \
                time to recover per process \(recoveries.map { $0.map(String.init(describing:)) ?? "never" }); \
                reader: \(reader.snapshots) snapshots, errors \(reader.errors), \(reader.violations.count) violations; \
                \(stored / 2) transfers stored
                """)
            print("server restart failures: \(writers.flatMap(\.failureLines).prefix(8))")
            #expect(status == 0, "pg_ctl restart failed with status \(status)")
            #expect(ended.allSatisfy { $0 }, "a writer did not finish within 300 s: \(ended)")
            #expect(
                writers.allSatisfy { $0.summary != nil }, "a writer printed no summary: \(writers.map(\.diagnostics))")
            #expect(writers.flatMap(\.otherLines).isEmpty, "\(writers.flatMap(\.otherLines).prefix(3))")
            print("server restart, exactly once: \(once)")
            #expect(once.isClean, "\(once)")
            let untyped = failures.keys.filter { !["busy", "io", "retriesExhausted", "unknown"].contains($0) }
            #expect(untyped.isEmpty, "failures of other types: \(writers.flatMap(\.failureLines).prefix(5))")
            #expect(problems.isEmpty, "\(problems)")
            #expect(
                stored >= acknowledged.count && stored <= acknowledged.count + 2 * unknown,
                "\(stored) transactions stored for \(acknowledged.count) acknowledged and \(unknown) of unknown outcome"
            )
            #expect(recoveries.allSatisfy { $0 != nil }, "a process acknowledged nothing after the restart")
            #expect(reader.violations.isEmpty, "\(reader.violations.prefix(5))")
        }
        await server.stop()
    }
}
