import Foundation
import Ledger
import Strata

/// `ledger watch`: prints each change to the ledger as it is committed, by this or any other
/// process, newest last, until SIGINT or SIGTERM (then it says where to resume and exits 0).
///
/// The domain work is `LedgerWatcher`'s; this only picks the start, prints, and stops. Every
/// line is written straight to standard output (no buffering), so a pipe sees it at once.
struct Watch {
    let arguments: CLIArguments

    func run() async throws {
        _ = try arguments.operands(after: 1, count: 0...0, form: "watch [--from-start | --after TOKEN]")
        let requested = try startToken()
        let store = try LedgerStore(arguments, create: false)
        let watcher = LedgerWatcher(container: store.container)
        let stop = StopSignals()
        let current = try await watcher.currentToken()
        if let requested, requested > current {
            throw CLIError.badInput(
                """
                Token \(requested.rawValue) is past this store's last commit (\(current.rawValue)): it comes from \
                another store, or a typo. Pass a token `ledger watch` printed for this store, or --from-start.
                """
            )
        }
        let start = requested ?? current
        Output.line(
            """
            Watching the ledger at \(store.location) (\(store.engineName)) for changes after token \
            \(start.rawValue); stop with Ctrl-C.
            """
        )
        let last = try await stop.run { try await Self.follow(watcher, from: start) }
        Output.line("Stopped. Resume with: ledger watch --after \(last.rawValue)")
    }

    /// Prints every update until the task is cancelled; returns the last token seen. When the
    /// store cannot be read for a while (`.busy`: a server restarting, a lost connection), it
    /// says so on standard error and resumes after the last token it printed, so no change is
    /// missed or printed twice; any other error ends the watch.
    private static func follow(_ watcher: LedgerWatcher, from start: HistoryToken) async throws -> HistoryToken {
        var last = start
        var pause = Duration.milliseconds(250)
        while true {
            do {
                for try await update in watcher.updates(after: last) {
                    for change in update.changes { Output.line(Output.change(change, in: update)) }
                    last = update.token
                    pause = .milliseconds(250)
                }
                return last
            } catch let error as StrataError {
                guard case .busy = error else { throw error }
                let note = "ledger: the store cannot be read now (\(error)); resuming after token \(last.rawValue)\n"
                FileHandle.standardError.write(Data(note.utf8))
                try await Task.sleep(for: pause)
                pause = min(pause * 2, .seconds(5))
            }
        }
    }

    /// `--after TOKEN`, `--from-start` (the beginning), or nil for "from now".
    /// - Throws: ``CLIError/usage(_:)`` for both at once or a token that is not a number ≥ 0.
    private func startToken() throws(CLIError) -> HistoryToken? {
        let fromStart = arguments.flags.contains("--from-start")
        guard let text = arguments.options["--after"] else { return fromStart ? .beginning : nil }
        guard !fromStart else { throw .usage("watch takes --from-start or --after TOKEN, not both") }
        guard let raw = Int64(text), raw >= 0 else {
            throw .usage(
                """
                --after needs a token, a whole number of 0 or more such as the one `ledger watch` prints \
                when it stops; got \(String(reflecting: text))
                """
            )
        }
        return HistoryToken(rawValue: raw)
    }
}
