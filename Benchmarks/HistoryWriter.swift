import Foundation
import Strata
import StrataTestSupport

/// The committing side of workload 12, in a second process: `strata-bench` started again as
///
///     strata-bench --history-writer <sqlite|lmdb> <store directory> <commits>
///
/// opens the store the parent made (``StrataStore/configuration(_:in:)``), makes the commits
/// of ``DeliveryLatency/commit(_:in:)`` with the same pauses as workload 11, and then prints one
/// line per commit, `<index> <save() called> <save() returned>` (`CLOCK_MONOTONIC`
/// nanoseconds), on standard output. Each transaction names its commit in its author, so the parent's observer needs
/// nothing else to match them.
enum HistoryWriter {
    static let flag = "--history-writer"

    /// Runs the child mode with the arguments after ``flag``.
    static func main(_ arguments: [String]) async throws {
        guard arguments.count == 3, let engine = EngineChoice(rawValue: arguments[0]),
            let commits = Int(arguments[2]), commits > 0
        else {
            throw BenchmarkError.usage("\(flag) takes an engine, a store directory and a number of commits")
        }
        let directory = URL(fileURLWithPath: arguments[1])
        let container = try PersistentContainer(
            schema: try BenchmarkSchema.make(), engine: StrataStore.configuration(engine, in: directory))
        var saves: [SaveTimes] = []
        saves.reserveCapacity(commits)
        for (index, pause) in DeliveryLatency.pauses(commits).enumerated() {
            try await Task.sleep(for: pause)
            saves.append(try await DeliveryLatency.commit(index, in: container))
        }
        container.close()
        let lines = saves.enumerated().map { "\($0.offset) \($0.element.called) \($0.element.returned)\n" }.joined()
        FileHandle.standardOutput.write(Data(lines.utf8))
    }

    /// Starts the child on the store in `directory`, waits for it, and returns its save times
    /// by commit index.
    static func spawn(_ engine: EngineChoice, directory: URL, commits: Int) async throws -> [SaveTimes] {
        let process = SpawnedProcess()
        process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        process.arguments = [flag, engine.rawValue, directory.path, String(commits)]
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        // Blocking reads run on threads of their own: on the global queues they would take the
        // threads that Swift concurrency (and so the observer being measured) runs on.
        let (outputData, errorData) = await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                let errorData = ErrorDrain(errors.fileHandleForReading)
                let outputData = output.fileHandleForReading.readDataToEndOfFile()
                process.waitUntilExit()
                continuation.resume(returning: (outputData, errorData.wait()))
            }
        }
        guard process.terminationStatus == 0 else {
            throw BenchmarkError.mismatch(
                "the writer process exited with \(process.terminationStatus): "
                    + String(decoding: errorData, as: UTF8.self))
        }
        var saves = [SaveTimes](repeating: SaveTimes(called: 0, returned: 0), count: commits)
        for line in String(decoding: outputData, as: UTF8.self).split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count == 3, let index = Int(fields[0]), let called = UInt64(fields[1]),
                let returned = UInt64(fields[2]), index < commits
            else {
                throw BenchmarkError.mismatch("the writer process printed \(line)")
            }
            saves[index] = SaveTimes(called: called, returned: returned)
        }
        guard !saves.contains(where: { $0.returned == 0 }) else {
            throw BenchmarkError.mismatch("the writer process missed commits")
        }
        return saves
    }
}

/// Reads a pipe to its end on another thread, so the child can never block on a full pipe.
private final class ErrorDrain: @unchecked Sendable {
    private var data = Data()
    private let done = DispatchSemaphore(value: 0)

    init(_ handle: FileHandle) {
        Thread.detachNewThread { [self] in
            data = handle.readDataToEndOfFile()
            done.signal()
        }
    }

    /// The whole output, once the pipe is closed.
    func wait() -> Data {
        done.wait()
        return data
    }
}
