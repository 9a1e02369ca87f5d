import Foundation
import StrataStorage

/// The `strata` command line: parses the arguments, runs a command, and returns what to print
/// and the exit status (the executable's `main.swift` only prints it).
package enum StrataTool {
    /// What a command printed and its exit status.
    package struct Result: Sendable, Equatable {
        /// Standard output.
        package var output: String
        /// Standard error: one line for a failure.
        package var error: String
        /// The exit status (``ToolError/exitStatus``; 0 success, 1 a store `verify` found unsound).
        package var status: Int32
    }

    /// Runs the command `arguments` names (without the program's name). `progress`, when given,
    /// receives progress lines of long commands (`copy`, `backup`) as they happen: the executable
    /// passes one only when standard error is a terminal.
    package static func run(_ arguments: [String], progress: (@Sendable (String) -> Void)? = nil) -> Result {
        do {
            return try dispatch(arguments, progress: progress)
        } catch {
            return Result(output: "", error: error.message + "\n", status: error.exitStatus)
        }
    }

    private static func dispatch(
        _ arguments: [String], progress: (@Sendable (String) -> Void)?
    ) throws(ToolError) -> Result {
        guard let command = arguments.first else { throw .usage("name a command") }
        let rest = Array(arguments.dropFirst())
        switch command {
        case "--help", "-h", "help": return printed(ToolHelp.main)
        case "inspect":
            if rest.contains("--help") { return printed(ToolHelp.inspect) }
            let (store, json) = try storeAndJSON(rest, command: command)
            let report: InspectReport
            do {
                report = try InspectReport(OpenedStore(StoreArgument.inspection(for: store)))
            } catch {
                throw ToolError.from(error)
            }
            return printed(json ? try encoded(report) : report.text)
        case "verify":
            if rest.contains("--help") { return printed(ToolHelp.verify) }
            let (store, json) = try storeAndJSON(rest, command: command)
            let report = try StoreVerifier.verify(StoreArgument.inspection(for: store))
            var result = printed(json ? try encoded(report) : report.text)
            result.status = report.isSound ? 0 : 1
            return result
        case "history":
            if rest.isEmpty || rest.contains("--help") { return printed(ToolHelp.history) }
            return try prune(rest)
        case "copy":
            if rest.contains("--help") { return printed(ToolHelp.copy) }
            let options = try CopyOptions(rest, command: command)
            var copier = StoreCopier(source: options.stores[0], target: options.stores[1])
            copier.batchRows = options.batchRows
            copier.progress = progress
            let outcome = try copier.run()
            return printed(options.json ? try encoded(outcome) : outcome.text)
        case "backup":
            if rest.contains("--help") { return printed(ToolHelp.backup) }
            let options = try CopyOptions(rest, command: command)
            let outcome = try StoreBackup.backup(
                options.stores[0], to: options.stores[1], batchRows: options.batchRows, progress: progress)
            return printed(options.json ? try encoded(outcome) : outcome.text)
        default:
            throw .usage("unknown command \(String(reflecting: command))")
        }
    }

    /// `history prune STORE --before TOKEN|DATE [--force]`, without `history`.
    private static func prune(_ arguments: [String]) throws(ToolError) -> Result {
        guard arguments.first == "prune" else {
            throw .usage("unknown history command \(String(reflecting: arguments[0])): the one is `prune`")
        }
        var stores: [String] = []
        var before: String?
        var force = false
        var remaining = arguments.dropFirst()
        while let argument = remaining.popFirst() {
            switch argument {
            case "--force": force = true
            case "--before":
                guard let value = remaining.popFirst() else { throw .usage("--before needs a token or a date") }
                before = value
            default:
                if argument.hasPrefix("-") { throw .usage("unknown option \(argument) of history prune") }
                stores.append(argument)
            }
        }
        guard stores.count == 1 else { throw .usage("history prune takes one STORE") }
        guard let before else { throw .usage("history prune needs --before TOKEN|DATE") }
        let bound = try HistoryPruner.Bound(parsing: before)
        let outcome = try HistoryPruner.prune(StoreArgument.inspection(for: stores[0]), before: bound, force: force)
        return printed(outcome.text)
    }

    /// The one store argument and whether `--json` was given.
    private static func storeAndJSON(_ arguments: [String], command: String) throws(ToolError) -> (String, Bool) {
        var stores: [String] = []
        var json = false
        for argument in arguments {
            if argument == "--json" {
                json = true
            } else if argument.hasPrefix("-") {
                throw .usage("unknown option \(argument) of \(command)")
            } else {
                stores.append(argument)
            }
        }
        guard stores.count == 1 else { throw .usage("\(command) takes one STORE, got \(stores.count)") }
        return (stores[0], json)
    }

    private static func printed(_ text: String) -> Result {
        Result(output: text + "\n", error: "", status: 0)
    }

    private static func encoded(_ value: some Encodable) throws(ToolError) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        do {
            return String(decoding: try encoder.encode(value), as: UTF8.self)
        } catch {
            throw .storeFailed("cannot encode the report as JSON: \(error)")
        }
    }
}
