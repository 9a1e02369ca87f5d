extension StrataError {
    /// The `reason` of the `.notAStore` a server engine throws when the database its URL names
    /// does not exist, so that tools can tell a store that is not there (exit status 4) from
    /// one that is not Strata's.
    package static let missingDatabaseReason = "the database does not exist"
}
