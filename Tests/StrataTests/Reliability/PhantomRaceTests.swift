import Foundation
import Strata
import StrataConformance
import StrataTestSupport
import Testing

/// Issue 24, item 3: "insert an admin only if there is none", raced by 8 processes over 100 orgs.
/// Each process opens the store, waits for the others, then for each org runs one unit of work:
/// fetch the org's admins, and if there is none insert one. Without a guard two processes can
/// both see none and both insert (a phantom); with `requireUnchangedResults(of:)` the later save
/// conflicts, its retry sees the first admin, and every org ends with exactly one.
///
/// The processes are the conformance peer (`strata-conformance-peer`, modes `guard-race` and
/// `guard-count`); the figures are printed as `phantom race <engine>: …`.
@Suite("phantom race across processes", .serialized)
struct PhantomRaceTests {
    static let processes = 8
    static let orgs = 100

    /// Other processes open the store: the engines they share (``EngineKind/sharedAcrossProcesses``);
    /// in another process an in-memory store's name is a store of its own.
    @Test("8 processes × 100 orgs: with the guard no org gets two admins", arguments: EngineKind.sharedAcrossProcesses)
    func race(kind: EngineKind) async throws {
        let unguarded = try await Self.run(kind, guarded: false)
        let guarded = try await Self.run(kind, guarded: true)
        for (label, counts) in [("without", unguarded), ("with", guarded)] {
            print(
                "phantom race \(kind.rawValue): orgs with two or more admins, \(label) the guard: \(counts.more) "
                    + "(conflicts \(counts.conflicts), retries \(counts.retries))")
        }
        #expect(unguarded.none == 0, "every org got an admin without the guard too")
        #expect(guarded.none == 0 && guarded.one == Self.orgs && guarded.more == 0, "with the guard: \(guarded)")
    }

    struct Counts: CustomStringConvertible {
        var none = -1
        var one = -1
        var more = -1
        /// Over every racing process: the save conflicts, and the units of work re-run.
        var conflicts = 0
        var retries = 0
        var description: String { "none=\(none) one=\(one) more=\(more)" }
    }

    /// One race in a fresh store, then the count.
    static func run(_ kind: EngineKind, guarded: Bool) async throws -> Counts {
        let store = try TestStore(kind)
        let location = store.directory.appendingPathComponent("store.\(kind.rawValue)").path
        let go = store.directory.appendingPathComponent("go")
        let racers = try (0..<processes).map { index in
            try peer(
                kind, in: store.directory,
                [
                    "guard-race", "--store", location, "--orgs", "\(orgs)", "--guarded", "\(guarded)",
                    "--ready", store.directory.appendingPathComponent("ready-\(index)").path, "--go", go.path,
                ])
        }
        // Start them together: every process has opened the store before any races.
        let deadline = Date().addingTimeInterval(120)
        while (0..<processes).contains(where: {
            !FileManager.default.fileExists(atPath: store.directory.appendingPathComponent("ready-\($0)").path)
        }) {
            if Date() > deadline || racers.contains(where: { !$0.process.isRunning }) { break }
            try await Task.sleep(for: .milliseconds(5))
        }
        _ = FileManager.default.createFile(atPath: go.path, contents: nil)
        var counts = Counts()
        for racer in racers {
            let (status, errors) = await racer.finish()
            #expect(status == 0, "a racing process failed: \(errors)")
            let fields = Self.fields(racer.output())
            counts.conflicts += fields["conflicts"] ?? 0
            counts.retries += fields["retries"] ?? 0
        }
        let counter = try peer(kind, in: store.directory, ["guard-count", "--store", location, "--orgs", "\(orgs)"])
        let (status, errors) = await counter.finish()
        #expect(status == 0, "counting failed: \(errors)")
        let fields = Self.fields(counter.output())
        counts.none = fields["none"] ?? -1
        counts.one = fields["one"] ?? -1
        counts.more = fields["more"] ?? -1
        return counts
    }

    /// The `name=value` fields of a peer's output.
    static func fields(_ output: String) -> [String: Int] {
        var fields: [String: Int] = [:]
        for field in output.split(whereSeparator: \.isWhitespace) {
            let parts = field.split(separator: "=")
            if parts.count == 2, let value = Int(parts[1]) { fields[String(parts[0])] = value }
        }
        return fields
    }

    /// A started conformance peer whose output is collected in files.
    final class Peer: Sendable {
        let process: SpawnedProcess
        let outputFile: URL
        let errorFile: URL

        init(process: SpawnedProcess, outputFile: URL, errorFile: URL) {
            self.process = process
            self.outputFile = outputFile
            self.errorFile = errorFile
        }

        /// Waits for the exit; returns the status and what it wrote to standard error.
        func finish() async -> (Int32, String) {
            while process.isRunning { try? await Task.sleep(for: .milliseconds(5)) }
            process.waitUntilExit()
            let errors = (try? String(contentsOf: errorFile, encoding: .utf8)) ?? ""
            return (process.terminationStatus, errors)
        }

        func output() -> String { (try? String(contentsOf: outputFile, encoding: .utf8)) ?? "" }
    }

    /// Starts the peer with `arguments`; its output goes to files in `directory`.
    static func peer(_ kind: EngineKind, in directory: URL, _ arguments: [String]) throws -> Peer {
        let conformance = ConformanceTests.peer(kind)
        let name = UUID().uuidString
        let outputFile = directory.appendingPathComponent("peer-\(name).out")
        let errorFile = directory.appendingPathComponent("peer-\(name).err")
        _ = FileManager.default.createFile(atPath: outputFile.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errorFile.path, contents: nil)
        let process = SpawnedProcess()
        process.executableURL = conformance.executable
        process.arguments = conformance.arguments + arguments
        process.standardOutput = try FileHandle(forWritingTo: outputFile)
        process.standardError = try FileHandle(forWritingTo: errorFile)
        process.environment = ProcessInfo.processInfo.environment
        try process.run()
        return Peer(process: process, outputFile: outputFile, errorFile: errorFile)
    }
}
