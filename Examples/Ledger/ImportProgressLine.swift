import Foundation
import Ledger
import Synchronization

/// Shows a long import's progress on standard error, like ``MigrationProgressLine``:
/// `importing: 37% (1,200 of 3,243 lines)`, rewritten in place with a carriage return, then a
/// newline when the import ends. Imports shorter than ``minimumLines`` show nothing.
final class ImportProgressLine: Sendable {
    /// The fewest data lines for which the line is shown.
    static let minimumLines = 500

    private let shownPercent = Mutex<Int?>(nil)
    private let write: @Sendable (String) -> Void

    /// - Parameter write: where the text goes; standard error unless a caller captures it.
    init(write: @escaping @Sendable (String) -> Void = { FileHandle.standardError.write(Data($0.utf8)) }) {
        self.write = write
    }

    /// The in-place line: `"\rimporting: 37% (1200 of 3243 lines)"`.
    static func progressText(_ progress: ImportProgress) -> String {
        let percent = MigrationProgressLine.percent(progress.fractionCompleted)
        return "\rimporting: \(percent)% (\(progress.linesDone) of \(progress.linesTotal) lines)"
    }

    /// Takes one report from the import (its `progress` closure). A unit of work re-run after a
    /// conflict starts again from 0%, and the line shows it.
    func report(_ progress: ImportProgress) {
        guard progress.linesTotal >= Self.minimumLines else { return }
        let percent = MigrationProgressLine.percent(progress.fractionCompleted)
        let changed = shownPercent.withLock { shown in
            guard shown != percent else { return false }
            shown = percent
            return true
        }
        if changed { write(Self.progressText(progress)) }
    }

    /// Ends the line after the import.
    func finish() {
        if shownPercent.withLock({ $0 != nil }) { write("\n") }
    }

    /// Ends the line after a failed import, so that the error starts on a line of its own.
    func abandon() { finish() }
}
