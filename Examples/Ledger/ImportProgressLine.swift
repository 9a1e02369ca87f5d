import Foundation
import Ledger
import Synchronization

/// Shows a long import's progress on standard error, like ``MigrationProgressLine``:
/// `importing: 37% (1,200 of 3,243 lines)`, rewritten in place with a carriage return on a
/// terminal, then a newline when the import ends; into a file or a pipe, one line per tenth
/// (``ProgressStyle``). Imports shorter than ``minimumLines`` show nothing.
final class ImportProgressLine: Sendable {
    /// The fewest data lines for which the line is shown.
    static let minimumLines = 500

    private let shownPercent = Mutex<Int?>(nil)
    private let style: ProgressStyle
    private let write: @Sendable (String) -> Void

    /// - Parameters:
    ///   - style: in place or as lines; by default what standard error is.
    ///   - write: where the text goes; standard error unless a caller captures it.
    init(
        style: ProgressStyle = .standardError,
        write: @escaping @Sendable (String) -> Void = { FileHandle.standardError.write(Data($0.utf8)) }
    ) {
        self.style = style
        self.write = write
    }

    /// The line's text: `"importing: 37% (1200 of 3243 lines)"`.
    static func progressText(_ progress: ImportProgress) -> String {
        let percent = MigrationProgressLine.percent(progress.fractionCompleted)
        return "importing: \(percent)% (\(progress.linesDone) of \(progress.linesTotal) lines)"
    }

    /// Takes one report from the import (its `progress` closure). A unit of work re-run after a
    /// conflict starts again from 0%, and the line shows it.
    func report(_ progress: ImportProgress) {
        guard progress.linesTotal >= Self.minimumLines else { return }
        let percent = MigrationProgressLine.percent(progress.fractionCompleted)
        let changed = shownPercent.withLock { shown in
            guard style.shows(percent, after: shown) else { return false }
            shown = percent
            return true
        }
        if changed { write(style.line(Self.progressText(progress))) }
    }

    /// Ends the line after the import.
    func finish() {
        if shownPercent.withLock({ $0 != nil }) { write(style.end) }
    }

    /// Ends the line after a failed import, so that the error starts on a line of its own.
    func abandon() { finish() }
}
