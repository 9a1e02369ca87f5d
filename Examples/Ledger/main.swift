// The ledger example: the Ledger module's services behind a small command line.
//
//   swift run ledger [--engine sqlite|lmdb|postgres] [--store PATH|URL] [--schema NAME] <command> [arguments]
//   swift run ledger --help
//
// This file only parses, dispatches and reports errors. The engine is chosen in
// LedgerStore.swift; everything else goes through AccountService and TransactionService.

import Foundation
import Ledger
import Strata

/// Writes an error to standard error and exits with `code`.
func fail(_ message: String, code: Int32) -> Never {
    LedgerStore.closeAll()
    FileHandle.standardError.write(Data("ledger: error: \(message)\n".utf8))
    exit(code)
}

do {
    let arguments = try CLIArguments(Array(CommandLine.arguments.dropFirst()))
    // `watch` runs until SIGINT or SIGTERM: their handlers go in before any other thread starts.
    if arguments.words.first == "watch" && !arguments.help { StopSignals.install() }
    if arguments.help || arguments.words == ["help"] {
        print(Usage.text)
    } else {
        try await Commands(arguments: arguments).run()
    }
    LedgerStore.closeAll()
} catch let error as CLIError {
    switch error {
    case .usage: fail(error.description, code: 64)
    case .badInput: fail(error.description, code: 65)
    case .noStore: fail(error.description, code: 1)
    }
} catch let error as LedgerError {
    fail(error.description, code: 65)
} catch let error as StrataError {
    fail(error.description, code: 1)
} catch {
    fail("\(error)", code: 1)
}
