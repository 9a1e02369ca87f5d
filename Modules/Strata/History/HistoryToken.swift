/// A position in a store's persistent history: every commit gets the next token.
///
/// Tokens grow with every commit, across every process on the store, and are never reused, even
/// after the history before them is deleted. Save one (``rawValue`` is an `Int64` you can keep
/// anywhere) to resume reading or observing where you stopped.
///
/// ```swift
/// let start = try await container.currentHistoryToken()
/// // … later, or in another process:
/// for transaction in try await container.history(after: start) { print(transaction.token) }
/// ```
public struct HistoryToken: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    /// The token's number: 0 is before the first commit.
    public let rawValue: Int64

    /// The token with this number (a saved ``rawValue``).
    public init(rawValue: Int64) { self.rawValue = rawValue }

    /// The position before every commit: reading after it reads the whole history still kept.
    public static let beginning = HistoryToken(rawValue: 0)

    public static func < (lhs: HistoryToken, rhs: HistoryToken) -> Bool { lhs.rawValue < rhs.rawValue }

    /// Decodes a token saved as its number.
    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(Int64.self)
    }

    /// Encodes the token as its number.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    public var description: String { "HistoryToken(\(rawValue))" }
}
