/// An import's external ids in slices of at most ``size``, for the `contains` predicates that
/// look them up: no engine then meets a list longer than it binds at once.
enum ExternalIDSlices {
    /// The most ids one predicate lists.
    static let size = 500

    /// `ids` in order, cut into slices of at most ``size``.
    static func of(_ ids: [String]) -> [[String]] {
        stride(from: 0, to: ids.count, by: size).map { Array(ids[$0..<min($0 + size, ids.count)]) }
    }
}
