import Foundation
import StrataTestSupport
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// `SpawnedProcess`, which every test that starts a child uses: exit statuses and signals as
/// Foundation's `Process` reports them, its standard streams (a pipe, the null device, nil), and
/// no descriptor of the parent's leaking into the child.
@Suite("SpawnedProcess: children started with posix_spawn")
struct SpawnedProcessTests {
    /// Runs `/bin/sh -c script` to its end; returns it with its standard output.
    static func shell(
        _ script: String, configure: (SpawnedProcess) -> Void = { _ in }
    ) throws -> (
        SpawnedProcess, String
    ) {
        let child = SpawnedProcess()
        child.executableURL = URL(fileURLWithPath: "/bin/sh")
        child.arguments = ["-c", script]
        let output = Pipe()
        child.standardOutput = output
        configure(child)
        try child.run()
        let printed = output.fileHandleForReading.readDataToEndOfFile()
        child.waitUntilExit()
        return (child, String(decoding: printed, as: UTF8.self))
    }

    @Test("an exit status and a signal are reported as Foundation reports them")
    func statuses() throws {
        let (exited, _) = try Self.shell("exit 3")
        #expect(exited.terminationReason == .exit)
        #expect(exited.terminationStatus == 3)
        #expect(!exited.isRunning)
        let (killed, _) = try Self.shell("kill -TERM $$; sleep 5")
        #expect(killed.terminationReason == .uncaughtSignal)
        #expect(killed.terminationStatus == SIGTERM)
    }

    @Test("a pipe, the null device and nil reach the child's standard streams")
    func streams() throws {
        let (child, printed) = try Self.shell("readlink /proc/self/fd/0; readlink /proc/self/fd/2; echo done") {
            $0.standardInput = nil
            $0.standardError = FileHandle.nullDevice
        }
        #expect(child.terminationStatus == 0)
        #expect(printed.split(separator: "\n") == ["/dev/null", "/dev/null", "done"])
    }

    @Test("no descriptor of the parent's but the standard streams reaches the child")
    func descriptors() throws {
        // A descriptor without close-on-exec, which an exec alone would pass on.
        let extra = dup(2)
        #expect(extra > 2)
        defer { close(extra) }
        let (child, printed) = try Self.shell("ls /proc/self/fd")
        #expect(child.terminationStatus == 0)
        // `ls` itself holds 3, the directory it lists.
        #expect(Set(printed.split(separator: "\n")).isSubset(of: ["0", "1", "2", "3"]), "\(printed)")
    }

    @Test("a handler set after run() is called once the child ends; signals go to the child")
    func handlerAndSignals() throws {
        let child = SpawnedProcess()
        child.executableURL = URL(fileURLWithPath: "/bin/sleep")
        child.arguments = ["30"]
        child.standardOutput = nil
        try child.run()
        let called = Mutex(0)
        child.terminationHandler = { _ in called.withLock { $0 += 1 } }
        #expect(child.isRunning)
        #expect(child.processIdentifier > 0)
        child.interrupt()
        child.waitUntilExit()
        #expect(child.terminationReason == .uncaughtSignal)
        #expect(child.terminationStatus == SIGINT)
        #expect(called.withLock { $0 } == 1)
        child.terminate() // after the end: nothing to signal
        #expect(throws: SpawnedProcess.SpawnError.self) { try child.run() }
    }
}
