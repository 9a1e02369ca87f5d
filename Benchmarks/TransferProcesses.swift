import Foundation
import Ledger
import Strata
import StrataPostgres
import StrataTestSupport

/// Workload 7 across processes: ledger transfers per second from ``processes`` processes of
/// ``tasks`` tasks each on one store (issue 27), against the same tasks in one process. Each
/// process is `strata-bench` started again as
///
///     strata-bench --transfer-child <sqlite|lmdb|postgres> <store directory> <transfers> <seed> [<schema>]
///
/// which opens the ledger the parent made (PostgreSQL: the schema given, on the server in
/// `STRATA_POSTGRES_URL`), reads its accounts, prints `ready`, waits for a line on standard input,
/// makes `transfers` transfers from ``tasks`` tasks, and prints `done <transfers> <seconds>`.
/// The parent starts them all, releases them together, and divides every transfer by the
/// slowest child's time.
enum TransferProcesses {
    static let flag = "--transfer-child"
    static let processes = 4
    static let tasks = 8

    /// Runs the child mode with the arguments after ``flag``.
    static func main(_ arguments: [String]) async throws {
        guard (4...5).contains(arguments.count), let engine = EngineChoice(rawValue: arguments[0]),
            let transfers = Int(arguments[2]), transfers > 0, let seed = Int(arguments[3])
        else {
            throw BenchmarkError.usage(
                "\(flag) takes an engine, a store directory, a number of transfers, a seed and (PostgreSQL) a schema")
        }
        let directory = URL(fileURLWithPath: arguments[1])
        let configuration: EngineConfiguration
        if engine == .postgres {
            guard arguments.count == 5, let url = ProcessInfo.processInfo.environment[BenchmarkPostgres.variable] else {
                throw BenchmarkError.usage("\(flag) postgres needs a schema and \(BenchmarkPostgres.variable)")
            }
            configuration = .postgres(url: url, schema: arguments[4], options: BenchmarkPostgres.options)
        } else {
            configuration = LedgerWorkloads.configuration(engine, at: directory)
        }
        let container = try PersistentContainer(schema: .ledger, engine: configuration)
        defer { container.close() }
        let accounts = try await AccountService(contexts: container).list().map(\.id)
        guard accounts.count > 1 else { throw BenchmarkError.mismatch("the ledger has \(accounts.count) accounts") }
        FileHandle.standardOutput.write(Data("ready\n".utf8))
        // A parent that went away closes the pipe: then there is nothing to measure.
        guard readLine() != nil else { return }
        let started = ContinuousClock.now
        let made = try await ConcurrentTransfers.transfer(
            TransactionService(contexts: container), accounts: accounts, tasks: tasks, perTask: transfers / tasks,
            seed: seed)
        let elapsed = ContinuousClock.now - started
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        FileHandle.standardOutput.write(Data("done \(made) \(seconds)\n".utf8))
    }

    /// Transfers per second from ``processes`` children of ``tasks`` tasks on the ledger in
    /// `directory`, `transfers` transfers each.
    static func rate(_ engine: EngineChoice, directory: URL, transfers: Int) async throws -> Double {
        var arguments = [flag, engine.rawValue, directory.path, String(transfers)]
        var environment = ProcessInfo.processInfo.environment
        if engine == .postgres {
            environment[BenchmarkPostgres.variable] = try BenchmarkPostgres.requireURL()
        }
        var children: [Child] = []
        defer { for child in children where child.process.isRunning { child.process.terminate() } }
        for index in 0..<processes {
            arguments.append(String(index * 104_729))
            if engine == .postgres { arguments.append(BenchmarkPostgres.schema(for: directory)) }
            children.append(try Child(arguments: arguments, environment: environment))
            arguments.removeLast(engine == .postgres ? 2 : 1)
        }
        for child in children { try await child.waitForReady() }
        for child in children { child.release() }
        var total = 0
        var slowest = 0.0
        for child in children {
            let (made, seconds) = try await child.result()
            total += made
            slowest = max(slowest, seconds)
        }
        return slowest > 0 ? Double(total) / slowest : 0
    }

    /// One child process and its pipes.
    private final class Child: @unchecked Sendable {
        let process = SpawnedProcess()
        private let input = Pipe()
        private let output = Pipe()
        private let errors = Pipe()

        init(arguments: [String], environment: [String: String]) throws {
            process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
            process.arguments = arguments
            process.environment = environment
            process.standardInput = input
            process.standardOutput = output
            process.standardError = errors
            try process.run()
        }

        /// Waits for the child's `ready` line (a blocking read, on a thread of its own).
        func waitForReady() async throws {
            let line = await readLine()
            guard line == "ready" else { throw failure("said \(line ?? "nothing") instead of ready") }
        }

        /// Lets the child start its transfers.
        func release() {
            input.fileHandleForWriting.write(Data("go\n".utf8))
        }

        /// The child's transfers and seconds, once it has exited.
        func result() async throws -> (Int, Double) {
            let line = await readLine()
            await withCheckedContinuation { continuation in
                Thread.detachNewThread { [process] in
                    process.waitUntilExit()
                    continuation.resume()
                }
            }
            let fields = line?.split(separator: " ") ?? []
            guard process.terminationStatus == 0, fields.count == 3, fields[0] == "done", let made = Int(fields[1]),
                let seconds = Double(fields[2])
            else { throw failure("ended with \(line ?? "nothing")") }
            return (made, seconds)
        }

        /// The next line of the child's output, read byte by byte so that nothing after it is
        /// taken; nil at the end.
        private func readLine() async -> String? {
            await withCheckedContinuation { continuation in
                Thread.detachNewThread { [output] in
                    var bytes: [UInt8] = []
                    while true {
                        let byte = output.fileHandleForReading.readData(ofLength: 1)
                        guard let first = byte.first else {
                            continuation.resume(returning: bytes.isEmpty ? nil : String(decoding: bytes, as: UTF8.self))
                            return
                        }
                        if first == UInt8(ascii: "\n") { break }
                        bytes.append(first)
                    }
                    continuation.resume(returning: String(decoding: bytes, as: UTF8.self))
                }
            }
        }

        private func failure(_ what: String) -> BenchmarkError {
            if process.isRunning { process.terminate() }
            process.waitUntilExit()
            let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            return .mismatch("a transfer process \(what) (exit \(process.terminationStatus)): \(message)")
        }
    }
}
