import Foundation
import Ledger
import Strata
import StrataPostgres
import StrataTestSupport
import Synchronization
import Testing

/// The bank the server-only tests load: a ledger store on a PostgreSQL server with a few
/// accounts, several writer processes (`strata-crash-writer --mode bank`, each one "app server")
/// moving money between them through `TransactionService`, and a reader in the test process
/// that checks the bank invariant in every snapshot it takes while they run.
struct BankLoad {
    static let accountCount = 8
    static let openingBalance: Int64 = 1_000_000
    static var total: Int64 { Int64(accountCount) * openingBalance }

    /// The server's URL (the suite's, or a private cluster's).
    let url: String
    /// The path that names the store (`TestPostgres.schema(for:)` maps it to its schema).
    let path: URL
    let container: PersistentContainer

    /// Makes the ledger store at `path` on the server at `url`, with `accountCount` accounts.
    init(url: String, path: URL) async throws {
        self.url = url
        self.path = path
        container = try PersistentContainer(ledger: Self.configuration(url: url, path: path))
        let accounts = AccountService(contexts: container)
        for number in 0..<Self.accountCount {
            _ = try await accounts.create(name: "Bank \(number)", currency: "USD", openingBalance: Self.openingBalance)
        }
    }

    static func configuration(url: String, path: URL) -> EngineConfiguration {
        var configuration = EngineConfiguration.postgres(
            url: url, schema: TestPostgres.schema(for: path), options: PostgresOptions(poolSize: 4))
        configuration.location = path
        return configuration
    }

    /// Starts `count` writer processes of `transfers` transfers each, with `options` added to
    /// their command line (`--statement-timeout-ms 1000`, …).
    func startWriters(_ count: Int, transfers: Int, seed: UInt64, options: [String] = []) throws -> [BankWriter] {
        try (0..<count).map { index in
            try BankWriter(
                url: url, path: path, transfers: transfers, seed: seed &+ UInt64(index), options: options)
        }
    }

    /// What the reader saw: snapshots taken, invariant violations, and read errors by kind.
    struct ReaderReport: Sendable {
        var snapshots = 0
        var violations: [String] = []
        var errors: [String: Int] = [:]
    }

    /// Reads the bank in one snapshot after another until `stop` is set: in each, the balances
    /// must add up to the opening total and the transactions' amounts to zero.
    func readUntil(_ stop: StopSignal) async -> ReaderReport {
        var report = ReaderReport()
        while !stop.isStopped {
            let context = container.newBackgroundContext()
            do {
                let (balances, amounts, count) = try await context.perform {
                    let balances = try context.fetch(FetchRequest<Ledger.Account>()).map(\.balance)
                    let amounts = try context.fetch(FetchRequest<Ledger.Transaction>()).map(\.amount)
                    return (balances.reduce(0, +), amounts.reduce(0, +), amounts.count)
                }
                report.snapshots += 1
                if balances != Self.total || amounts != 0 {
                    report.violations.append(
                        "snapshot \(report.snapshots): balances total \(balances) (not \(Self.total)), "
                            + "\(count) transactions total \(amounts)"
                    )
                }
            } catch {
                report.errors[failureKind(error), default: 0] += 1
                if case StrataError.busy = error {
                } else if case StrataError.io = error {
                } else {
                    report.violations.append("a read failed with an untyped or unexpected error: \(error)")
                }
                try? await Task.sleep(for: .milliseconds(20))
            }
        }
        return report
    }

    /// The books after the load: every acknowledged transfer is there, every balance is its
    /// opening balance plus its transactions (no lost update), and the total is unchanged.
    func audit(acknowledged: Set<String>) async throws -> (transactions: Int, problems: [String]) {
        let context = container.newBackgroundContext()
        return try await context.perform {
            var problems: [String] = []
            let accounts = try context.fetch(FetchRequest<Ledger.Account>())
            var stored: Set<String> = []
            for account in accounts {
                let transactions = account.transactions.allObjects
                stored.formUnion(transactions.map(\.objectID.uriString))
                let expected = account.openingBalance + transactions.map(\.amount).reduce(0, +)
                if account.balance != expected {
                    problems.append("\(account.name): balance \(account.balance), its transactions say \(expected)")
                }
            }
            let total = accounts.map(\.balance).reduce(0, +)
            if total != Self.total { problems.append("the balances total \(total), not \(Self.total)") }
            let missing = acknowledged.subtracting(stored)
            if !missing.isEmpty {
                problems.append(
                    "\(missing.count) acknowledged transactions are missing, e.g. \(missing.sorted().prefix(3))")
            }
            let count = try context.count(for: FetchRequest<Ledger.Transaction>())
            if count != stored.count {
                problems.append("\(count) transactions, of which \(stored.count) have an account")
            }
            return (count, problems)
        }
    }
}

extension BankLoad {
    /// What the exactly-once audit found, transfer by transfer (by note, "bank <seed> <n>").
    struct OnceReport: Sendable, CustomStringConvertible {
        /// Transfers stored more than once (more than one withdrawal and one deposit).
        var doubled: [String] = []
        /// Acknowledged transfers not stored.
        var lost: [String] = []
        /// Transfers whose failure said nothing was written, stored all the same.
        var phantom: [String] = []
        /// Transfers of unknown outcome (`.commitOutcomeUnknown`): stored, and not stored.
        var unknownApplied = 0
        var unknownNotApplied = 0
        /// Transfers with a note of neither a finished transfer nor a known failure.
        var unaccounted: [String] = []

        var isClean: Bool { doubled.isEmpty && lost.isEmpty && phantom.isEmpty && unaccounted.isEmpty }

        var description: String {
            """
            \(doubled.count) applied twice \(doubled.prefix(3)), \(lost.count) acknowledged and lost \
            \(lost.prefix(3)), \(phantom.count) failed but stored \(phantom.prefix(3)), unknown outcome: \
            \(unknownApplied) stored and \(unknownNotApplied) not, \(unaccounted.count) unaccounted \
            \(unaccounted.prefix(3))
            """
        }
    }

    /// Checks every transfer of `writers` against the store: an acknowledged one is stored exactly
    /// once (two transactions with its note), one whose failure said nothing was written is not
    /// stored, one of unknown outcome is stored once or not at all, and none is stored twice.
    func auditExactlyOnce(_ writers: [BankWriter]) async throws -> OnceReport {
        let context = container.newBackgroundContext()
        let stored = try await context.perform {
            try context.fetch(FetchRequest<Ledger.Transaction>()).reduce(into: [String: Int]()) {
                $0[$1.note, default: 0] += 1
            }
        }
        var report = OnceReport()
        var accounted: Set<String> = []
        for writer in writers {
            for (number, outcome) in writer.outcomes {
                let note = "bank \(writer.seed) \(number)"
                accounted.insert(note)
                let rows = stored[note] ?? 0
                if rows > 2 { report.doubled.append("\(note): \(rows) rows") }
                switch outcome {
                case "ack": if rows < 2 { report.lost.append(note) }
                case "unknown": if rows >= 2 { report.unknownApplied += 1 } else { report.unknownNotApplied += 1 }
                default: if rows > 0 { report.phantom.append("\(note) (\(outcome))") }
                }
            }
        }
        report.unaccounted = stored.keys.filter { $0.hasPrefix("bank ") && !accounted.contains($0) }.sorted()
        return report
    }
}

/// The kind of a failure, as the bank tests count them: busy, io, retriesExhausted, conflict or other.
func failureKind(_ error: any Error) -> String {
    switch error as? StrataError {
    case .busy?: "busy"
    case .io?: "io"
    case .retriesExhausted?: "retriesExhausted"
    case .conflict?: "conflict"
    case .commitOutcomeUnknown?: "unknown"
    default: "other"
    }
}

/// Tells a loop in another task to stop.
final class StopSignal: Sendable {
    private let flag = Atomic<Bool>(false)
    func stop() { flag.store(true, ordering: .relaxed) }
    var isStopped: Bool { flag.load(ordering: .relaxed) }
}

/// The lines a process prints, each with the moment it arrived, read on a thread of its own
/// (never a Swift-concurrency thread) as the process prints them.
final class LineStream: Sendable {
    private let received = Mutex<[(line: String, at: ContinuousClock.Instant)]>([])
    private let ended = Atomic<Bool>(false)

    init(_ handle: FileHandle) {
        Thread { [self] in pump(handle) }.start()
    }

    /// Reads `handle` to its end, line by line.
    private func pump(_ handle: FileHandle) {
        var pending = Data()
        while true {
            let data = handle.availableData
            if data.isEmpty { break }
            pending.append(data)
            while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: pending[pending.startIndex..<newline], as: UTF8.self)
                pending.removeSubrange(pending.startIndex...newline)
                let now = ContinuousClock.now
                received.withLock { $0.append((line, now)) }
            }
        }
        ended.store(true, ordering: .releasing)
    }

    /// Every line so far, with its arrival.
    var lines: [(line: String, at: ContinuousClock.Instant)] { received.withLock { $0 } }

    /// Whether the output reached its end.
    var isEnded: Bool { ended.load(ordering: .acquiring) }
}

/// One writer process of the bank (`strata-crash-writer --mode bank`) and its output.
final class BankWriter: @unchecked Sendable {
    // `process` is configured in init and then only read.
    let process = SpawnedProcess()
    private let output: LineStream
    private let errorOutput: LineStream

    /// The writer's seed: its transfers' notes are "bank <seed> <n>".
    let seed: UInt64

    init(url: String, path: URL, transfers: Int, seed: UInt64, options: [String] = []) throws {
        self.seed = seed
        process.executableURL = CrashSafetyTests.writerURL
        process.arguments =
            [
                "--mode", "bank", "--engine", "postgres", "--store", path.path, "--count", "\(transfers)", "--seed",
                "\(seed)",
            ] + options
        var environment = ProcessInfo.processInfo.environment
        environment[TestPostgres.variable] = url
        process.environment = environment
        let pipe = Pipe()
        let errors = Pipe()
        process.standardOutput = pipe
        process.standardError = errors
        try process.run()
        output = LineStream(pipe.fileHandleForReading)
        errorOutput = LineStream(errors.fileHandleForReading)
    }

    /// What the process wrote to its standard error (a crash's report), and how it ended.
    var diagnostics: String {
        let ending =
            process.isRunning
            ? "running"
            : "exit \(process.terminationStatus) (\(process.terminationReason == .uncaughtSignal ? "signal" : "exit"))"
        // A crash report's cause and the frames in this project's code.
        let report = errorOutput.lines.map(\.line).filter {
            $0.contains("crashed") || $0.contains("Fatal") || $0.contains(" at /") || $0.contains("error")
                || $0.contains(" in lib")
        }
        return "\(ending): " + report.prefix(16).joined(separator: " | ")
    }

    /// Every line so far, with its arrival.
    var lines: [(line: String, at: ContinuousClock.Instant)] { output.lines }

    /// Waits (without blocking a thread) until the process exits and its output is read, or
    /// `limit` passes (then kills it); true when it ended by itself.
    func wait(limit: Duration) async -> Bool {
        let deadline = ContinuousClock.now + limit
        while process.isRunning || !output.isEnded {
            if ContinuousClock.now > deadline {
                if process.isRunning { kill(process.processIdentifier, SIGKILL) }
                return false
            }
            try? await Task.sleep(for: .milliseconds(50))
        }
        return true
    }

    /// The ids of both transactions of every acknowledged transfer.
    var acknowledged: [String] {
        lines.compactMap { entry -> [String]? in
            let fields = entry.line.split(separator: " ")
            guard fields.first == "ack", fields.count >= 4 else { return nil }
            return [String(fields[2]), String(fields[3])]
        }.flatMap { $0 }
    }

    /// Each transfer's outcome by number: "ack", or its failure's kind.
    var outcomes: [(number: Int, outcome: String)] {
        lines.compactMap { entry in
            let fields = entry.line.split(separator: " ")
            guard fields.count >= 3, let number = Int(fields[1]) else { return nil }
            if fields[0] == "ack" { return (number, "ack") }
            if fields[0] == "fail" { return (number, String(fields[2])) }
            return nil
        }
    }

    /// How long each call took, in milliseconds (the field after the ids or the kind).
    var callMilliseconds: [Int64] {
        lines.compactMap { entry in
            let fields = entry.line.split(separator: " ")
            if fields.first == "ack", fields.count >= 5 { return Int64(fields[4]) }
            if fields.first == "fail", fields.count >= 4 { return Int64(fields[3]) }
            return nil
        }
    }

    /// The failures by kind.
    var failures: [String: Int] {
        lines.reduce(into: [:]) { counts, entry in
            let fields = entry.line.split(separator: " ")
            if fields.first == "fail", fields.count >= 3 { counts[String(fields[2]), default: 0] += 1 }
        }
    }

    /// The failure lines themselves.
    var failureLines: [String] { lines.map(\.line).filter { $0.hasPrefix("fail ") } }

    /// The final "done …" line, split into its fields by name (acknowledged, failed, conflicts,
    /// retries, exhausted); nil when the process did not finish.
    var summary: [String: Int]? {
        guard let line = lines.last(where: { $0.line.hasPrefix("done ") })?.line else { return nil }
        let fields = line.split(separator: " ").map(String.init)
        guard fields.count == 9 else { return nil }
        return [
            "acknowledged": Int(fields[1]) ?? -1, "failed": Int(fields[2]) ?? -1, "conflicts": Int(fields[4]) ?? -1,
            "retries": Int(fields[6]) ?? -1, "exhausted": Int(fields[8]) ?? -1,
        ]
    }

    /// Lines that are neither an acknowledgement, a failure nor the summary (an open failure).
    var otherLines: [String] {
        lines.map(\.line).filter { !$0.hasPrefix("ack ") && !$0.hasPrefix("fail ") && !$0.hasPrefix("done ") }
    }
}
