import Dispatch
import Foundation

/// Tells whether the caller runs on the main thread or on the main dispatch queue, where the
/// main actor runs. Under the Linux test runner the main queue may be drained by a thread other
/// than the process's first one, so `Thread.isMainThread` alone is not enough.
///
/// ```swift
/// let onMain = try await context.perform { MainQueue.isCurrent }   // false
/// ```
public enum MainQueue {
    private static let key = DispatchSpecificKey<Bool>()
    private static let marked: Bool = {
        DispatchQueue.main.setSpecific(key: key, value: true)
        return true
    }()

    /// Whether the caller is on the main thread or the main queue.
    public static var isCurrent: Bool {
        precondition(marked)
        return Thread.isMainThread || DispatchQueue.getSpecific(key: key) == true
    }
}
