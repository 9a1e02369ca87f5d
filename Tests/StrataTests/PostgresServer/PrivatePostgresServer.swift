import Foundation
import StrataTestSupport
import Testing

/// A PostgreSQL cluster of one test's own, started with `Scripts/with-postgres.sh` (so set up
/// exactly like the suite's) and stopped by `stop()`: for tests that restart the server, which
/// must not cut off the rest of the suite running on the shared one.
final class PrivatePostgresServer: @unchecked Sendable {
    // Configured in init, then only read.
    private let process = SpawnedProcess()
    private let output: LineStream
    /// The file whose creation tells the script to stop the cluster.
    private let stopFile: URL
    /// The cluster's URL (`STRATA_POSTGRES_URL` inside the script).
    let url: String
    /// Its pg_ctl script (`STRATA_POSTGRES_CTL`), e.g. `"\(ctl) restart -m fast -w"`.
    let ctl: String

    /// The repository, found from this file's path.
    static var repository: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
    }

    /// Starts the cluster and waits (up to 120 s, without blocking a thread) for its URL.
    init() async throws {
        stopFile = FileManager.default.temporaryDirectory.appendingPathComponent("strata-pg-stop-\(UUID().uuidString)")
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        // The script's command prints the URL and waits until the stop file appears or this
        // process is gone. (Not EOF on a pipe: a server restarted by `control` inherits this
        // process's descriptors, so a pipe to the script might never close.)
        process.arguments = [
            Self.repository.appendingPathComponent("Scripts/with-postgres.sh").path, "bash", "-c",
            #"""
            echo "url $STRATA_POSTGRES_URL"; echo "ctl $STRATA_POSTGRES_CTL"
            while [ ! -e "$0" ] && kill -0 "$1" 2>/dev/null; do sleep 0.2; done; rm -f "$0"
            """#,
            stopFile.path, "\(getpid())",
        ]
        var environment = ProcessInfo.processInfo.environment
        environment["STRATA_POSTGRES_URL"] = nil
        environment["STRATA_POSTGRES_CTL"] = nil
        process.environment = environment
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        output = LineStream(pipe.fileHandleForReading)
        let deadline = ContinuousClock.now + .seconds(120)
        var found: (url: String?, ctl: String?) = (nil, nil)
        while found.url == nil || found.ctl == nil {
            for (line, _) in output.lines {
                if line.hasPrefix("url ") { found.url = String(line.dropFirst(4)) }
                if line.hasPrefix("ctl ") { found.ctl = String(line.dropFirst(4)) }
            }
            if found.url == nil || found.ctl == nil {
                guard ContinuousClock.now < deadline, process.isRunning else {
                    kill(process.processIdentifier, SIGTERM)
                    throw PostgresSQLError(message: "Scripts/with-postgres.sh started no private server within 120 s")
                }
                try await Task.sleep(for: .milliseconds(50))
            }
        }
        url = found.url ?? ""
        ctl = found.ctl ?? ""
    }

    /// Runs `$ctl arguments` on a thread of its own (pg_ctl waits for the server), returning its
    /// exit status. `system(3)`, not `Process`: Foundation's `Process` was seen never to reap
    /// `runuser` (the infrastructure notes of issue 17, §2).
    func control(_ arguments: String) async -> Int32 {
        await runOnOwnThread { self.controlBlocking(arguments) }.0
    }

    /// ``control(_:)`` on the calling thread, which it blocks until pg_ctl exits: for a caller
    /// that already runs on a thread of its own.
    func controlBlocking(_ arguments: String) -> Int32 {
        // Every descriptor above 2 is closed first: the restarted server would keep this test
        // process's pipes open for as long as it runs.
        let closeDescriptors =
            #"for fd in /proc/$$/fd/*; do fd=${fd##*/}; [ "$fd" -gt 2 ] && eval "exec $fd>&-"; done 2>/dev/null"#
        let command =
            #"/bin/bash -c '\#(closeDescriptors); exec "$0" "$@"' \#(ctl) \#(arguments)"#
            + " </dev/null >/dev/null 2>&1"
        return system(command)
    }

    /// Lets the script go on: it stops the server and deletes the cluster. Waits up to 60 s.
    func stop() async {
        _ = FileManager.default.createFile(atPath: stopFile.path, contents: nil)
        let deadline = ContinuousClock.now + .seconds(60)
        while process.isRunning && ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(50)) }
        if process.isRunning { kill(process.processIdentifier, SIGTERM) }
    }
}
