public import Foundation

/// `localizedDescription` of a `LedgerError` is its ``LedgerError/description``, the message
/// the `ledger` command prints.
///
/// ```swift
/// print(LedgerError.sameAccount("Checking").localizedDescription)
/// ```
extension LedgerError: LocalizedError {
    /// The same text as ``description``.
    public var errorDescription: String? { description }
}
