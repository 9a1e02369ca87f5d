import Foundation

/// How `ledger` draws a progress line on standard error: rewritten in place with a carriage
/// return on a terminal, or, when standard error is a file or a pipe (a log), one line for each
/// tenth of the way, so that the log holds no carriage returns.
///
/// `LEDGER_PROGRESS=inplace` or `LEDGER_PROGRESS=lines` chooses one whatever standard error is.
enum ProgressStyle: Sendable, Equatable {
    case inPlace
    case lines

    /// The style for this process's standard error.
    static var standardError: ProgressStyle {
        switch ProcessInfo.processInfo.environment["LEDGER_PROGRESS"] {
        case "inplace": .inPlace
        case "lines": .lines
        default: isatty(STDERR_FILENO) == 1 ? .inPlace : .lines
        }
    }

    /// Whether the line for `percent` is written after the one for `shown` (nil: none yet): every
    /// change in place; as lines, the first, then each new tenth.
    func shows(_ percent: Int, after shown: Int?) -> Bool {
        guard let shown else { return true }
        return self == .inPlace ? percent != shown : percent / 10 != shown / 10
    }

    /// `text` as written: after a carriage return in place, ending with a newline as lines.
    func line(_ text: String) -> String {
        self == .inPlace ? "\r" + text : text + "\n"
    }

    /// What ends the last progress line: a newline in place; nothing as lines, each already ended.
    var end: String { self == .inPlace ? "\n" : "" }
}
