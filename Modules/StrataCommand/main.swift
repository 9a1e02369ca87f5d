import Foundation
import StrataTool

// `strata`: see `strata --help` and Docs/StrataTool.md. The logic is in StrataTool.
let result = StrataTool.run(Array(CommandLine.arguments.dropFirst()))
FileHandle.standardOutput.write(Data(result.output.utf8))
FileHandle.standardError.write(Data(result.error.utf8))
exit(result.status)
