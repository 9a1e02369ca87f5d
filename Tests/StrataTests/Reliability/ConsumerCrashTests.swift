import CrashModels
import Foundation
import Strata
import StrataTestSupport
import Testing

/// A history consumer that writes into the same store and moves its cursor in the same save
/// (`strata-crash-writer --mode consume`) is killed with SIGKILL at random moments and started
/// again, 20 times, while this process commits source rows; then it runs until it has caught up.
/// Every source commit must have been processed exactly once: one `ConsumerProcessed` row per
/// source commit's token, none twice, none missing.
///
/// `STRATA_CONSUMER_API=separate` runs the consumer that saves its row and then moves the cursor
/// with `setHistoryCursor` (the API before the move could join the save) and only reports the
/// duplicates it leaves, for comparison; `STRATA_SEED` replays the kill delays.
@Suite("consumer crash", .serialized)
struct ConsumerCrashTests {
    static let kills = 20
    /// Source commits, one every 10 ms or so: the kills land while they are being made.
    static let sourceCommits = 600
    static let api = ProcessInfo.processInfo.environment["STRATA_CONSUMER_API"] ?? "staged"
    static let seed: UInt64 =
        ProcessInfo.processInfo.environment["STRATA_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 0...UInt64.max)

    /// Its subject is what a killed process leaves in the store: the engines whose store outlives
    /// the process (``EngineKind/durable``); an in-memory store ends with it.
    @Test("a consumer killed at random moments processes every commit exactly once", arguments: EngineKind.durable)
    func killedConsumer(kind: EngineKind) async throws {
        try #require(
            FileManager.default.isExecutableFile(atPath: CrashSafetyTests.writerURL.path),
            "build the strata-crash-writer product first (swift build)")
        var random = SeededGenerator(seed: Self.seed)
        let store = try TestStore(kind)
        let location = store.configuration.location
        let container = try PersistentContainer(schema: try ConsumerCrash.schema(), engine: store.configuration)
        defer { container.close() }
        let start = try await container.currentHistoryToken()
        try await container.setHistoryCursor(ConsumerCrash.cursor, to: start)

        let producer = Task {
            for number in 0..<Self.sourceCommits {
                try await container.performUnitOfWork { context in
                    ConsumerSource(context: context).number = Int64(number)
                    try context.save()
                }
                try await Task.sleep(for: .milliseconds(10))
            }
        }
        var acknowledged = 0
        for _ in 0..<Self.kills {
            let delay = Duration.milliseconds(Int.random(in: 50...400, using: &random))
            let run = try await Self.runConsumer(kind: kind, location: location, killAfter: delay)
            #expect(run.status == SIGKILL, "a consumer ended by itself with status \(run.status) before it was killed")
            acknowledged += run.count
        }
        try await producer.value
        let produced = Self.sourceCommits
        let sources = try await container.history(after: start, entities: [ConsumerSource.self]).map(\.token.rawValue)
        let last = try #require(sources.last, "the producer committed nothing")
        let catchUp = try await Self.runConsumer(kind: kind, location: location, until: last)
        #expect(catchUp.status == 0, "the catching-up consumer exited with \(catchUp.status)")

        let rows = try await container.performUnitOfWork { context in
            try context.fetch(FetchRequest<ConsumerProcessed>()).map(\.sourceToken)
        }
        var counts: [Int64: Int] = [:]
        for token in rows { counts[token, default: 0] += 1 }
        let duplicates = counts.values.reduce(0) { $0 + max($1 - 1, 0) }
        let missing = sources.filter { counts[$0] == nil }
        let strangers = counts.keys.filter { !Set(sources).contains($0) }
        print(
            """
            consumer crash \(kind) (\(Self.api)): \(Self.kills) kills, \(produced) source commits, \(rows.count) rows, \
            \(duplicates) duplicates, \(missing.count) missing, \(acknowledged + catchUp.count) acknowledged, \
            seed \(Self.seed)
            """)
        #expect(sources.count == produced, "the source commits in the history")
        #expect(missing.isEmpty, "source commits never processed: \(missing.prefix(10)) (seed \(Self.seed))")
        #expect(strangers.isEmpty, "rows for tokens that are no source commit: \(strangers.prefix(10))")
        let cursor = try await container.historyCursors()[ConsumerCrash.cursor]
        #expect(cursor?.rawValue == last, "the cursor at the end")
        if Self.api == "staged" {
            #expect(duplicates == 0, "source commits processed twice (seed \(Self.seed))")
        }
    }

    /// Runs the consumer until `killAfter` passes (then SIGKILL) or, with `until`, until it exits
    /// by itself (killed after 120 s, a hang guard); returns its exit status and how many
    /// commits it acknowledged.
    static func runConsumer(
        kind: EngineKind, location: URL, killAfter delay: Duration = .seconds(120), until: Int64? = nil
    ) async throws -> (status: Int32, count: Int) {
        let process = SpawnedProcess()
        process.executableURL = CrashSafetyTests.writerURL
        process.arguments =
            ["--mode", "consume", "--api", api, "--engine", kind.rawValue, "--store", location.path]
            + (until.map { ["--until", String($0)] } ?? [])
        // A file, not a pipe: a consumer catching up prints more than a pipe holds.
        let printed = location.deletingLastPathComponent().appendingPathComponent("consumer-\(UUID().uuidString).out")
        _ = FileManager.default.createFile(atPath: printed.path, contents: nil)
        let output = try FileHandle(forWritingTo: printed)
        defer { try? FileManager.default.removeItem(at: printed) }
        process.standardOutput = output
        process.standardError = FileHandle.standardError
        let (exited, exit) = AsyncStream.makeStream(of: Int32.self)
        process.terminationHandler = { finished in
            exit.yield(finished.terminationStatus)
            exit.finish()
        }
        try process.run()
        let killer = Task {
            try await Task.sleep(for: delay)
            Foundation.kill(process.processIdentifier, SIGKILL)
        }
        var status: Int32 = -1
        for await value in exited { status = value }
        killer.cancel()
        try output.close()
        let text = String(decoding: try Data(contentsOf: printed), as: UTF8.self)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        return (status, lines.count)
    }
}
