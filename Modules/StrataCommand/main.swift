import Foundation
import StrataTool

// `strata`: see `strata --help` and Docs/StrataTool.md. The logic is in StrataTool.
// Progress lines of long commands go to standard error, only when it is a terminal.
let onTerminal = isatty(FileHandle.standardError.fileDescriptor) == 1
let progress: (@Sendable (String) -> Void)? =
    onTerminal ? { @Sendable line in FileHandle.standardError.write(Data(("\r\u{1B}[K" + line).utf8)) } : nil
let result = StrataTool.run(Array(CommandLine.arguments.dropFirst()), progress: progress)
if onTerminal { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
FileHandle.standardOutput.write(Data(result.output.utf8))
FileHandle.standardError.write(Data(result.error.utf8))
exit(result.status)
