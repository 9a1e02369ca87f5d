import Foundation
import StrataTestSupport
import Testing

/// Runs `strata-probe` (built next to the test binary) for the store-lifetime tests: creation
/// races, opens during writes, reader slots, waiting writers.
final class LifetimeProbe: @unchecked Sendable {
    /// The probe executable built next to the test binary.
    static var url: URL {
        let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        return executable.deletingLastPathComponent().appendingPathComponent("strata-probe")
    }

    static func requireBuilt() throws {
        try #require(
            FileManager.default.isExecutableFile(atPath: url.path), "build the strata-probe product first (swift build)"
        )
    }

    let process = SpawnedProcess()
    private let output = Pipe()
    private var buffered = Data()

    /// Starts `strata-probe MODE --engine ENGINE --store PATH [options]`.
    init(_ mode: String, engine: String, store: URL, _ options: [String: String] = [:]) throws {
        process.executableURL = Self.url
        process.arguments =
            [mode, "--engine", engine, "--store", store.path]
            + options.sorted { $0.key < $1.key }.flatMap { ["--\($0.key)", $0.value] }
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
    }

    deinit {
        if process.isRunning { stop() }
    }

    /// The next line the probe prints, or nil once it exited without printing one.
    func nextLine() -> String? {
        while true {
            if let newline = buffered.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffered[buffered.startIndex..<newline], as: UTF8.self)
                buffered = Data(buffered[(newline + 1)...])
                return line
            }
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { return nil }
            buffered.append(chunk)
        }
    }

    /// Every line until the probe exits.
    func remainingLines() -> [String] {
        var lines: [String] = []
        while let line = nextLine() { lines.append(line) }
        process.waitUntilExit()
        return lines
    }

    /// ``remainingLines()`` read on a thread of its own (``Blocking``), for async tests: a probe
    /// runs for seconds, too long to hold one of Swift concurrency's few threads.
    func collectRemainingLines() async -> [String] {
        (try? await Blocking.run { self.remainingLines() }) ?? []
    }

    /// Kills the probe with SIGKILL and reaps it.
    func stop() {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    var pid: Int32 { process.processIdentifier }

    /// The reader slots of an LMDB store as `mdb_stat -r` lists them: (pid, transaction or "-").
    static func readerSlots(_ store: URL) throws -> [(pid: Int32, txn: String)] {
        let process = SpawnedProcess()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/mdb_stat")
        process.arguments = ["-r", store.path]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let text = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return text.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ")
            guard fields.count == 3, let pid = Int32(fields[0]) else { return nil }
            return (pid, String(fields[2]))
        }
    }
}
