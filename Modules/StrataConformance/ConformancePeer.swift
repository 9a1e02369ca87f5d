public import Foundation
public import Strata
import StrataTestSupport

/// A second process for the cross-process checks: an executable of yours whose `main` calls
/// ``StrataConformance/peerMain(arguments:engine:)``, with the arguments it needs first.
///
/// The kit knows no engine, so the executable opens the store with yours. A check that needs a
/// peer fails when none is given; it never skips.
///
/// ```swift
/// // Sources/my-engine-peer/main.swift
/// import Foundation
/// import StrataConformance
/// exit(await StrataConformance.peerMain(arguments: CommandLine.arguments) { .myEngine(at: $0) })
///
/// // in the test
/// let peer = ConformancePeer(executable: productsDirectory.appendingPathComponent("my-engine-peer"))
/// try await check.run(engine: { .myEngine(at: $0.appendingPathComponent("store")) }, peer: peer)
/// ```
public struct ConformancePeer: Sendable {
    /// The executable to start.
    public var executable: URL
    /// Arguments passed before the kit's own (for instance which engine to open).
    public var arguments: [String]

    /// A peer started as `executable arguments… <kit arguments>`.
    public init(executable: URL, arguments: [String] = []) {
        self.executable = executable
        self.arguments = arguments
    }
}

/// What a finished peer process did.
struct PeerOutcome: Sendable {
    let status: Int32
    let output: String
    let errors: String
}

extension ConformanceHarness {
    /// Starts the peer with `arguments` after its leading ones; `finished` resumes when it exits.
    /// - Throws: a ``ConformanceFailure`` when the check runs without a peer or it cannot start.
    func startPeer(_ arguments: [String]) throws -> RunningPeer {
        guard let peer else {
            throw fail(
                """
                this check starts a second process and none was given: pass a ConformancePeer (an executable \
                whose main calls StrataConformance.peerMain) to ConformanceCheck.run(engine:peer:)
                """)
        }
        guard FileManager.default.isExecutableFile(atPath: peer.executable.path) else {
            throw fail("the conformance peer \(peer.executable.path) is not an executable file: build it first")
        }
        return try RunningPeer(executable: peer.executable, arguments: peer.arguments + arguments)
    }
}

extension ConformanceHarness {
    /// Has another opener of the main store do `work`: the peer process (started with `arguments`)
    /// for an engine shared across processes, else, for one that is not
    /// (``EngineCapabilities/sharesAcrossProcesses``), `work` on a second container of this process,
    /// in a task of its own, given the main store's configuration.
    /// - Throws: a ``ConformanceFailure`` when the peer cannot start, exits with a failure, or the
    ///   work in this process throws or does not finish.
    func inOtherOpener(
        _ arguments: [String], _ what: String, file: String = #fileID, line: Int = #line,
        work: @escaping @Sendable (EngineConfiguration) async throws -> Void
    ) async throws {
        guard capabilities.sharesAcrossProcesses else {
            let configuration = configuration
            let task = Task<Void, any Error>.detached { try await work(configuration) }
            do {
                try await value(of: task, what, file: file, line: line)
            } catch let failure as ConformanceFailure {
                throw failure
            } catch {
                throw fail("\(what), on a second container of this process, failed: \(error)", file: file, line: line)
            }
            return
        }
        let peer = try startPeer(arguments)
        let exited = Task<PeerOutcome, any Error> { await peer.finished() }
        let outcome: PeerOutcome
        do {
            outcome = try await value(of: exited, what, file: file, line: line)
        } catch {
            peer.stop()
            throw error
        }
        try expect(
            outcome.status == 0, "\(what) exited with status \(outcome.status): \(outcome.errors)\(outcome.output)",
            file: file, line: line)
    }
}

/// A started peer process.
final class RunningPeer: Sendable {
    private let process: SpawnedProcess
    private let output = Pipe()
    private let errors = Pipe()
    private let exited: AsyncStream<Int32>

    init(executable: URL, arguments: [String]) throws {
        let (exited, exit) = AsyncStream.makeStream(of: Int32.self)
        self.exited = exited
        process = SpawnedProcess()
        process.executableURL = executable
        process.arguments = arguments
        process.standardOutput = output
        process.standardError = errors
        process.terminationHandler = { finished in
            exit.yield(finished.terminationStatus)
            exit.finish()
        }
        try process.run()
    }

    /// Waits for the process to exit and returns what it printed.
    func finished() async -> PeerOutcome {
        // Drain the pipes while it runs, so a chatty peer cannot block on a full pipe.
        async let printed = Self.readAll(output)
        async let complained = Self.readAll(errors)
        var status: Int32 = -1
        for await value in exited { status = value }
        return PeerOutcome(status: status, output: await printed, errors: await complained)
    }

    /// Ends the process (a check that gave up on it).
    func stop() {
        if process.isRunning { process.terminate() }
    }

    private static func readAll(_ pipe: Pipe) async -> String {
        let handle = pipe.fileHandleForReading
        // A thread of its own: a read blocked on the global queues would take a thread Swift
        // concurrency needs (two of them starve every task on a two-core machine).
        return await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(returning: String(decoding: handle.readDataToEndOfFile(), as: UTF8.self))
            }
        }
    }
}

extension StrataConformance {
    /// The body of a conformance peer executable (see ``ConformancePeer``): runs what a
    /// cross-process check asks for on the store it names, opened with `engine`, and returns the
    /// exit status (0 when it did it all). The modes: `commit` (history delivery across
    /// processes), `guard-race` (one of several processes racing "insert an admin if there is
    /// none" over a range of orgs, with or without `ObjectContext.requireUnchangedResults(of:)`;
    /// prints its conflict and retry counts)
    /// and `guard-count` (prints how many of those orgs have no admin, one, and more).
    ///
    /// ```swift
    /// exit(await StrataConformance.peerMain(arguments: CommandLine.arguments) { .myEngine(at: $0) })
    /// ```
    /// - Parameters:
    ///   - arguments: the process's arguments; the kit's are found by name, so leading ones of
    ///     your own (and the program name) are ignored.
    ///   - engine: the engine configuration for a store at a location.
    /// - Returns: 0 on success, 2 for arguments it does not understand, 1 when the work failed
    ///   (the error is printed to standard error).
    public static func peerMain(
        arguments: [String], engine: @escaping @Sendable (URL) -> EngineConfiguration
    ) async -> Int32 {
        func value(_ name: String) -> String? {
            guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count else { return nil }
            return arguments[index + 1]
        }
        if arguments.contains("migrate"), let store = value("--store") {
            do {
                try MigrationProcessChecks.peerMigrates(engine: engine(URL(fileURLWithPath: store)))
                return 0
            } catch {
                FileHandle.standardError.write(Data("conformance peer: \(error)\n".utf8))
                return 1
            }
        }
        if arguments.contains("guard-race") {
            guard let store = value("--store"), let orgs = value("--orgs").flatMap(Int.init),
                let guarded = value("--guarded").flatMap(Bool.init), let ready = value("--ready"),
                let go = value("--go")
            else {
                FileHandle.standardError.write(
                    Data(
                        "usage: … guard-race --store PATH --orgs N --guarded true|false --ready PATH --go PATH\n"
                            .utf8))
                return 2
            }
            do {
                let counts = try await PredicateGuardChecks.peerRace(
                    engine: engine(URL(fileURLWithPath: store)), orgs: orgs, guarded: guarded,
                    ready: URL(fileURLWithPath: ready), go: URL(fileURLWithPath: go))
                FileHandle.standardOutput.write(Data("\(counts)\n".utf8))
                return 0
            } catch {
                FileHandle.standardError.write(Data("conformance peer: \(error)\n".utf8))
                return 1
            }
        }
        if arguments.contains("batch"), let store = value("--store") {
            do {
                try await BatchHistoryChecks.peerBatch(engine: engine(URL(fileURLWithPath: store)))
                return 0
            } catch {
                FileHandle.standardError.write(Data("conformance peer: \(error)\n".utf8))
                return 1
            }
        }
        if arguments.contains("guard-count") {
            guard let store = value("--store"), let orgs = value("--orgs").flatMap(Int.init) else {
                FileHandle.standardError.write(Data("usage: … guard-count --store PATH --orgs N\n".utf8))
                return 2
            }
            do {
                let counts = try await PredicateGuardChecks.peerCount(
                    engine: engine(URL(fileURLWithPath: store)), orgs: orgs)
                FileHandle.standardOutput.write(Data("\(counts)\n".utf8))
                return 0
            } catch {
                FileHandle.standardError.write(Data("conformance peer: \(error)\n".utf8))
                return 1
            }
        }
        guard arguments.contains("commit"), let store = value("--store"),
            let count = value("--count").flatMap(Int.init),
            let author = value("--author"), let prefix = value("--prefix")
        else {
            FileHandle.standardError.write(
                Data(
                    ("usage: … commit --store PATH --count N --author NAME --prefix TEXT\n"
                        + "   or: … migrate --store PATH\n").utf8))
            return 2
        }
        do {
            try await HistoryProcessChecks.peerCommits(
                engine: engine(URL(fileURLWithPath: store)), count: count, author: author, prefix: prefix)
            return 0
        } catch {
            FileHandle.standardError.write(Data("conformance peer: \(error)\n".utf8))
            return 1
        }
    }
}
