import StrataStorage
import Synchronization

/// Passes on a migration's progress reports whose fraction is not below the highest passed so
/// far. An engine may run the whole migration again in the same open (LMDB, after growing its
/// map) and report from 0 once more; the caller's progress must never go back.
///
/// ```swift
/// let forward = ForwardOnlyProgress { print($0.fractionCompleted) }
/// forward.report(progress)
/// ```
final class ForwardOnlyProgress: Sendable {
    private let highest = Mutex(0.0)
    private let forward: @Sendable (MigrationProgress) -> Void

    /// Reports go on to `forward`, on the caller's thread.
    init(_ forward: @escaping @Sendable (MigrationProgress) -> Void) {
        self.forward = forward
    }

    /// Passes `progress` on unless its fraction is below one passed before.
    func report(_ progress: MigrationProgress) {
        let passes = highest.withLock { highest in
            guard progress.fractionCompleted >= highest else { return false }
            highest = progress.fractionCompleted
            return true
        }
        if passes { forward(progress) }
    }
}
