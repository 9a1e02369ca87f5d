import Foundation
import Testing

@Suite("strata: the test runner of child processes")
struct ToolChildProcessTests {
    /// A shell loop (one process: only builtins) printing `count` numbered lines of 64 bytes to
    /// standard error, then `count` to standard output.
    static func script(lines count: Int) -> String {
        let padding = String(repeating: "x", count: 48)
        return """
            emit() { i=0; while [ $i -lt \(count) ]; do printf '%s %08d \(padding)\\n' "$1" $i; i=$((i+1)); done; }
            emit error >&2
            emit print
            """
    }

    @Test("a child that writes far more than a pipe holds to standard error, stdout still open, returns")
    func largeStandardError() async throws {
        // 4,000 lines of 64 bytes: 256,000 bytes on standard error before the first byte on
        // standard output, four times what a pipe holds. Read one pipe after the other, this
        // never returns: the child waits for room on standard error, the reader for the end of
        // standard output.
        let lines = 4_000
        let run = try await StrataCommandRun.run(
            executable: URL(fileURLWithPath: "/bin/sh"), ["-c", Self.script(lines: lines)])
        #expect(run.status == 0)
        let errors = run.error.split(separator: "\n")
        let printed = run.output.split(separator: "\n")
        #expect(run.error.utf8.count == lines * 64)
        #expect(errors.count == lines && errors.last?.hasPrefix("error 00003999") == true)
        #expect(printed.count == lines && printed.last?.hasPrefix("print 00003999") == true)
    }
}
