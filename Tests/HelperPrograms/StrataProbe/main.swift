// A helper process for the multi-process tests: several copies run at once against one store
// (creating it, writing, holding snapshots, idling) while a test watches what each reports.
//
//   strata-probe MODE --engine sqlite|lmdb|postgres --store PATH [mode options]
//
// Every mode prints one result line per operation: `ok ...` or `error <case>: <description>`
// (see ProbeOutput.swift), and exits 0 unless its arguments were wrong.

import Foundation

let modes: [String: ProbeMode] =
    genericModes
    .merging(lmdbModes) { first, _ in first }
    .merging(sqliteModes) { first, _ in first }
    .merging(coreModes) { first, _ in first }

let arguments = ProbeArguments(CommandLine.arguments.dropFirst())
guard let name = arguments.mode, let mode = modes[name] else {
    let names = modes.keys.sorted().joined(separator: ", ")
    FileHandle.standardError.write(
        Data("usage: strata-probe MODE --engine sqlite|lmdb --store PATH [options]; modes: \(names)\n".utf8))
    exit(2)
}
do {
    exit(try await mode(arguments))
} catch {
    FileHandle.standardError.write(Data("strata-probe \(name): \(error)\n".utf8))
    exit(2)
}
