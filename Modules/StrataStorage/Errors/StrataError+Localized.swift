public import Foundation

/// `localizedDescription` of a `StrataError` is its ``StrataError/description``: what happened
/// and what to do, instead of Foundation's "The operation could not be completed".
///
/// ```swift
/// let error: any Error = StrataError.busy("another process holds the store's lock")
/// print(error.localizedDescription)  // "The store is busy: another process holds the store's lock. …"
/// ```
extension StrataError: LocalizedError {
    /// The same text as ``description``.
    public var errorDescription: String? { description }
}
