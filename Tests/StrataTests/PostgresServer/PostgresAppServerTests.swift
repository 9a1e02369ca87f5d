import Foundation
import Strata
import StrataTestSupport
import Synchronization
import Testing

/// Several app servers on one PostgreSQL store: 4 separate processes × 500 transfers each
/// through the ledger's `TransactionService`, while this process reads the bank again and
/// again. Every snapshot balances, no update is lost, conflicts are retried, and every
/// acknowledged transfer is stored.
@Suite("PostgreSQL: several app servers")
struct PostgresAppServerTests {
    static let processes = 4
    static let transfersEach = 500

    @Test("4 processes × 500 transfers through TransactionService on one server keep the bank whole")
    func severalAppServers() async throws {
        try #require(
            FileManager.default.isExecutableFile(atPath: CrashSafetyTests.writerURL.path),
            "build the strata-crash-writer product first (swift build)")
        let url = try #require(TestPostgres.url, "\(TestPostgres.variable) is not set: run with Scripts/test.sh")
        let store = try TestStore(.postgres)
        let bank = try await BankLoad(url: url, path: store.directory.appendingPathComponent("store.postgres"))
        defer { bank.container.close() }
        let started = ContinuousClock.now
        let writers = try bank.startWriters(Self.processes, transfers: Self.transfersEach, seed: 0x5EED)
        let stop = StopSignal()
        async let reading = bank.readUntil(stop)
        var ended: [Bool] = []
        for writer in writers { ended.append(await writer.wait(limit: .seconds(300))) }
        stop.stop()
        let reader = await reading
        let elapsed = ContinuousClock.now - started

        let summaries = writers.map(\.summary)
        let acknowledged = Set(writers.flatMap(\.acknowledged))
        let failures = writers.map(\.failures).reduce(into: [String: Int]()) { $0.merge($1, uniquingKeysWith: +) }
        let conflicts = summaries.compactMap { $0?["conflicts"] }.reduce(0, +)
        let retries = summaries.compactMap { $0?["retries"] }.reduce(0, +)
        let (stored, problems) = try await bank.audit(acknowledged: acknowledged)
        print(
            """
            several app servers: \(Self.processes) processes × \(Self.transfersEach) transfers in \(elapsed): \
            \(acknowledged.count / 2) acknowledged, failures \(failures), \(conflicts) conflicts, \(retries) retries; \
            reader: \(reader.snapshots) snapshots, \(reader.violations.count) violations, errors \(reader.errors); \
            \(stored) transactions stored
            """)
        #expect(ended.allSatisfy { $0 }, "a writer did not finish within 300 s: \(ended)")
        #expect(writers.flatMap(\.otherLines).isEmpty, "\(writers.flatMap(\.otherLines).prefix(3))")
        #expect(summaries.allSatisfy { $0 != nil }, "a writer printed no summary: \(writers.map(\.diagnostics))")
        #expect(failures.isEmpty, "transfers failed: \(failures)")
        #expect(acknowledged.count == 2 * Self.processes * Self.transfersEach)
        #expect(stored == acknowledged.count, "lost or extra transactions: \(stored) stored")
        #expect(problems.isEmpty, "\(problems)")
        #expect(reader.violations.isEmpty, "\(reader.violations.prefix(5))")
        #expect(reader.snapshots > 0, "the reader took no snapshot while the writers ran")
    }
}
