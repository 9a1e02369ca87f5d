import CSQLite
import CrashModels
import Foundation
import Strata
import StrataTestSupport
import Testing

/// Kills a process that saves in a loop with SIGKILL at random moments, then reopens the store:
/// nothing acknowledged may be lost and every invariant must hold. 50 kills per engine, 500
/// with `STRATA_STRESS=1`.
///
/// The kill delays and the writer's transfers come from one seed, printed at the start and in
/// every failure; `STRATA_SEED=<seed>` replays them (the operating system's scheduling still
/// varies, so a kill lands near, not exactly at, the same instruction).
@Suite("crash safety", .serialized)
struct CrashSafetyTests {
    static let kills = ProcessInfo.processInfo.environment["STRATA_STRESS"] == "1" ? 500 : 50

    /// `STRATA_SEED` when set (a test that cannot parse it fails), otherwise a fresh random seed.
    static let seedSetting = ProcessInfo.processInfo.environment["STRATA_SEED"]
    static let seed: UInt64 = seedSetting.flatMap { UInt64($0) } ?? UInt64.random(in: 0...UInt64.max)

    /// The crash writer built next to the test binary.
    static var writerURL: URL {
        let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        return executable.deletingLastPathComponent().appendingPathComponent("strata-crash-writer")
    }

    @Test(
        "SIGKILL at random moments loses no acknowledged save and breaks no invariant", arguments: EngineKind.allCases)
    func killAtRandom(kind: EngineKind) async throws {
        try #require(
            FileManager.default.isExecutableFile(atPath: Self.writerURL.path),
            "build the strata-crash-writer product first (swift build)")
        try #require(
            Self.seedSetting == nil || UInt64(Self.seedSetting!) != nil,
            "STRATA_SEED must be an unsigned 64-bit integer, got \(Self.seedSetting!)")
        print("crash safety \(kind): seed \(Self.seed) (replay with STRATA_SEED=\(Self.seed))")
        var random = SeededGenerator(seed: Self.seed)
        let store = try TestStore(kind)
        let location = store.configuration.location
        var violations: [String] = []
        var lost = 0
        var acknowledgedTotal: Int64 = 0
        for kill in 0..<Self.kills {
            let delay = Duration.milliseconds(Int.random(in: 40...300, using: &random))
            let writerSeed = random.next()
            let acknowledged = try await Self.runAndKill(
                kind: kind, location: location, writerSeed: writerSeed, after: delay)
            acknowledgedTotal = max(acknowledgedTotal, acknowledged)
            let problems = try await Self.verify(kind: kind, location: location, acknowledged: acknowledged)
            if problems.contains(where: { $0.hasPrefix("lost") }) { lost += 1 }
            violations += problems.map { "kill \(kill) (after \(delay), writer --seed \(writerSeed)): \($0)" }
        }
        print(
            """
            crash safety \(kind): \(Self.kills) kills, \(violations.count) violations, \(lost) lost acknowledged \
            commits, last acknowledged sequence \(acknowledgedTotal), seed \(Self.seed)
            """
        )
        #expect(
            violations.isEmpty, "seed \(Self.seed) (replay with STRATA_SEED=\(Self.seed)): \(violations.prefix(10))")
        #expect(
            acknowledgedTotal > 0, "the writer never acknowledged a save; the test proved nothing (seed \(Self.seed))")
    }

    /// Starts the writer, lets it run, kills it, and returns the last sequence it acknowledged.
    static func runAndKill(
        kind: EngineKind, location: URL, writerSeed: UInt64, after delay: Duration
    ) async throws -> Int64 {
        let process = Process()
        process.executableURL = writerURL
        process.arguments = ["--engine", kind.rawValue, "--store", location.path, "--seed", String(writerSeed)]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        try await Task.sleep(for: delay)
        Foundation.kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        // Only complete lines were acknowledged.
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        return lines.compactMap { Int64($0) }.max() ?? 0
    }

    /// Reopens the store and lists every broken promise.
    static func verify(kind: EngineKind, location: URL, acknowledged: Int64) async throws -> [String] {
        var problems: [String] = []
        if FileManager.default.fileExists(atPath: location.path) == false {
            return acknowledged > 0 ? ["lost: the store vanished"] : []
        }
        let container: PersistentContainer
        do {
            container = try PersistentContainer(
                schema: try CrashModel.schema(), engine: kind.configuration(in: location.deletingLastPathComponent()))
        } catch {
            return ["the store did not reopen: \(error)"]
        }
        let context = container.newBackgroundContext()
        let (balances, entrySums, sequences, accountCount) = try await context.perform {
            let accounts = try context.fetch(FetchRequest<CrashAccount>())
            let entries = try context.fetch(FetchRequest<CrashEntry>())
            return (
                accounts.map(\.balance), accounts.map { $0.entries.reduce(Int64(0)) { $0 + $1.amount } },
                entries.map(\.sequence).sorted(), accounts.count
            )
        }
        let expectedCount = CrashModel.accountCount
        let total = Int64(expectedCount) * CrashModel.openingBalance
        if accountCount != 0 && accountCount != expectedCount {
            problems.append("\(accountCount) accounts instead of \(expectedCount)")
        }
        if accountCount == expectedCount && balances.reduce(0, +) != total {
            problems.append("balances total \(balances.reduce(0, +)), not \(total)")
        }
        for (balance, entries) in zip(balances, entrySums) where balance != CrashModel.openingBalance + entries {
            problems.append(
                "a balance of \(balance) does not equal \(CrashModel.openingBalance) plus its entries (\(entries))")
        }
        let highest = sequences.last ?? 0
        if sequences != Array(stride(from: Int64(1), through: highest, by: 1)) {
            problems.append("entry sequences are not exactly 1...\(highest)")
        }
        if highest < acknowledged {
            problems.append("lost: acknowledged \(acknowledged) but the store ends at \(highest)")
        }
        problems += integrityProblems(kind: kind, location: location)
        return problems
    }

    /// SQLite's integrity check; for LMDB, the full scan above already verified every row's
    /// checksum, so check that no stale reader slot survived the reopen.
    static func integrityProblems(kind: EngineKind, location: URL) -> [String] {
        switch kind {
        case .sqlite:
            var db: OpaquePointer?
            defer { sqlite3_close(db) }
            guard sqlite3_open_v2(location.path, &db, SQLITE_OPEN_READONLY, nil) == SQLITE_OK else {
                return ["sqlite3 could not open the store"]
            }
            var statement: OpaquePointer?
            defer { sqlite3_finalize(statement) }
            guard sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &statement, nil) == SQLITE_OK,
                sqlite3_step(statement) == SQLITE_ROW,
                let text = sqlite3_column_text(statement, 0)
            else { return ["PRAGMA integrity_check did not run"] }
            let result = String(cString: text)
            return result == "ok" ? [] : ["integrity_check: \(result)"]
        case .lmdb:
            guard FileManager.default.isExecutableFile(atPath: "/usr/bin/mdb_stat") else {
                return ["mdb_stat is missing (install lmdb-utils)"]
            }
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/mdb_stat")
            process.arguments = ["-r", location.path]
            let output = Pipe()
            process.standardOutput = output
            do { try process.run() } catch { return ["mdb_stat did not run: \(error)"] }
            process.waitUntilExit()
            let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            // Reader lines are "    pid     thread     txnid"; every listed pid must be alive.
            let stale = text.split(separator: "\n").compactMap { line -> Int32? in
                let fields = line.split(separator: " ")
                guard fields.count == 3, let pid = Int32(fields[0]) else { return nil }
                return Foundation.kill(pid, 0) == 0 ? nil : pid
            }
            return stale.isEmpty ? [] : ["stale reader slots of dead processes: \(stale)"]
        }
    }
}
