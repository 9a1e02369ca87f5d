import Foundation
import StrataTestSupport
import Synchronization

/// A child process run to its end, with all it printed.
///
/// Its standard output and standard error are read at the same time, each on a thread of its
/// own: a pipe holds 64 KB, so a child that fills the one not being read would block on it
/// forever while the other is read to an end that never comes.
struct ChildProcess: Sendable {
    let status: Int32
    let output: Data
    let error: Data

    /// Runs `executable ARGUMENTS…` and waits for it on the calling thread (off the test's
    /// tasks: see `Blocking.run`). `input`, when given, is written to its standard input, which is
    /// then closed.
    static func run(
        _ executable: URL, _ arguments: [String], environment: [String: String]? = nil, input: Data? = nil
    ) throws -> ChildProcess {
        let process = SpawnedProcess()
        process.executableURL = executable
        process.arguments = arguments
        if let environment { process.environment = environment }
        let output = Pipe()
        let error = Pipe()
        let stdin = Pipe()
        process.standardOutput = output
        process.standardError = error
        process.standardInput = stdin
        try process.run()
        let outputReader = PipeReader(output.fileHandleForReading)
        let errorReader = PipeReader(error.fileHandleForReading)
        if let input { try stdin.fileHandleForWriting.write(contentsOf: input) }
        try stdin.fileHandleForWriting.close()
        let (outputData, errorData) = (try outputReader.wait(), try errorReader.wait())
        process.waitUntilExit()
        return ChildProcess(status: process.terminationStatus, output: outputData, error: errorData)
    }
}

/// Reads a pipe to its end on a thread of its own.
private final class PipeReader: Sendable {
    private let read = Mutex<Result<Data, any Error>?>(nil)
    private let finished = DispatchSemaphore(value: 0)

    init(_ handle: FileHandle) {
        Thread { [self] in
            let data = Result { try handle.readToEnd() ?? Data() }
            read.withLock { $0 = data }
            finished.signal()
        }.start()
    }

    /// Waits for the pipe's end and returns everything it carried.
    func wait() throws -> Data {
        finished.wait()
        return try read.withLock { $0 ?? .success(Data()) }.get()
    }
}
