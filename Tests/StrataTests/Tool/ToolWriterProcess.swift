import CrashModels
import Foundation
import Strata
import StrataTestSupport
import Synchronization
import Testing

/// A `strata-crash-writer` process saving transfers into a store while a `strata` command runs:
/// each acknowledged save prints its sequence, read here as it comes.
final class ToolWriterProcess: Sendable {
    private let process: SpawnedProcess
    private let printed = Mutex<String>("")

    /// The writer built next to the test binary.
    static var url: URL {
        let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        return executable.deletingLastPathComponent().appendingPathComponent("strata-crash-writer")
    }

    /// Starts a writer on the store at `location` (a test store's path) of engine `kind`.
    init(kind: EngineKind, location: URL) throws {
        try #require(
            FileManager.default.isExecutableFile(atPath: Self.url.path),
            "build the strata-crash-writer product first (swift build)")
        process = SpawnedProcess()
        process.executableURL = Self.url
        process.arguments = ["--engine", kind.rawValue, "--store", location.path, "--seed", "28"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        output.fileHandleForReading.readabilityHandler = { [weak self] handle in
            let data = handle.availableData
            self?.printed.withLock { $0 += String(decoding: data, as: UTF8.self) }
        }
        try process.run()
    }

    deinit { stop() }

    /// The highest sequence acknowledged so far (complete lines only).
    var acknowledged: Int64 {
        printed.withLock { text in
            text.split(separator: "\n", omittingEmptySubsequences: false).dropLast().compactMap { Int64($0) }.max() ?? 0
        }
    }

    /// Waits until the writer has acknowledged more than `sequence`.
    func waitPast(_ sequence: Int64) async throws {
        let deadline = ContinuousClock.now + .seconds(60)
        while acknowledged <= sequence {
            try #require(process.isRunning, "the writer stopped")
            try #require(ContinuousClock.now < deadline, "the writer acknowledged nothing past \(sequence) in 60 s")
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Kills the writer and waits for it.
    func stop() {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }
}

/// Checks of a crash-model store that a `strata` command wrote.
enum CrashStoreCheck {
    /// The problems of the crash-model store `configuration` opens, read as a consistent prefix of
    /// the writer's commits: entries numbered exactly 1...N (N at least `atLeast`, at most
    /// `atMost`), balances that are their entries' sums and add up.
    static func prefixProblems(
        _ configuration: EngineConfiguration, atLeast: Int64, atMost: Int64
    ) async throws -> (highest: Int64, problems: [String]) {
        let container = try PersistentContainer(schema: try CrashModel.schema(), engine: configuration)
        defer { container.close() }
        let snapshot = try await CrashStoreSnapshot.read(container)
        var problems: [String] = []
        let sequences = snapshot.entries.values.sorted()
        let highest = sequences.last ?? 0
        if sequences != Array(stride(from: Int64(1), through: highest, by: 1)) {
            problems.append("entry sequences are not exactly 1...\(highest)")
        }
        if snapshot.entryCount != sequences.count { problems.append("entries without an account") }
        if highest < atLeast || highest > atMost {
            problems.append("the store ends at \(highest), outside \(atLeast)...\(atMost)")
        }
        let total = snapshot.accounts.values.map(\.balance).reduce(0, +)
        if snapshot.accounts.count != CrashModel.accountCount
            || total != Int64(CrashModel.accountCount) * CrashModel.openingBalance
        {
            problems.append("\(snapshot.accounts.count) accounts holding \(total) in all")
        }
        for account in snapshot.accounts.values where account.balance != CrashModel.openingBalance + account.entrySum {
            problems.append("a balance of \(account.balance) is not its entries' sum")
        }
        problems += snapshot.memoProblems(highest: highest)
        return (highest, problems)
    }
}
