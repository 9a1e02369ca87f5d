import Foundation
import Strata
import Synchronization

/// Shows a store's migration on standard error while `ledger` opens it: `migrating store: 37%`,
/// rewritten in place with a carriage return on a terminal (one line per tenth into a file or a
/// pipe: ``ProgressStyle``), then `migrated store from v1 to v4 in 0.4 s`.
///
/// Nothing is written when the store needs no migration (the container then never reports).
final class MigrationProgressLine: Sendable {
    private struct State {
        var fromVersion = 0
        var toVersion = 0
        /// The last percentage written, so that repeated reports do not rewrite the line.
        var shownPercent: Int?
    }

    private let state = Mutex(State())
    private let started = ContinuousClock.now
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

    /// A fraction as a whole percentage, rounded down and kept within 0...100.
    static func percent(_ fractionCompleted: Double) -> Int {
        Int((min(max(fractionCompleted, 0), 1) * 100).rounded(.down))
    }

    /// The line's text for a percentage: `"migrating store: 37%"`.
    static func progressText(percent: Int) -> String {
        "migrating store: \(percent)%"
    }

    /// The closing line's text: `"migrated store from v1 to v4 in 0.4 s"`.
    static func summaryText(from: Int, to: Int, seconds: Double) -> String {
        "migrated store from v\(from) to v\(to) in \(String(format: "%.1f", seconds)) s"
    }

    /// Takes one report from the container (the `progress` callback).
    func report(_ progress: MigrationProgress) {
        let text = state.withLock { state -> String? in
            state.fromVersion = progress.storeVersion
            state.toVersion = progress.modelVersion
            let percent = Self.percent(progress.fractionCompleted)
            guard style.shows(percent, after: state.shownPercent) else { return nil }
            state.shownPercent = percent
            return style.line(Self.progressText(percent: percent))
        }
        if let text { write(text) }
    }

    /// Ends the line after the store opened: the summary when a migration ran, nothing otherwise.
    func finish() {
        let versions = state.withLock { state in state.shownPercent == nil ? nil : (state.fromVersion, state.toVersion)
        }
        guard let (from, to) = versions else { return }
        let elapsed = ContinuousClock.now - started
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        // In place, the summary replaces the progress line and ends it.
        write(style.line(Self.summaryText(from: from, to: to, seconds: seconds)) + style.end)
    }

    /// Ends the line after a failed open, so that the error starts on a line of its own.
    func abandon() {
        if state.withLock({ $0.shownPercent != nil }) { write(style.end) }
    }
}
