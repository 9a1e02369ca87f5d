/// What ``ImportService/importCSV(_:file:progress:)`` did: how many lines it read, how many
/// transactions it added and updated, and how many lines it skipped as purged.
///
/// ```swift
/// let summary = try await imports.importCSV(text, file: "bank.csv")
/// print("\(summary.inserted) added, \(summary.updated) updated")
/// ```
public struct ImportSummary: Sendable, Hashable {
    /// The data lines read (the header and blank lines not counted).
    public var lines: Int
    /// Transactions added: lines whose external id the ledger did not have.
    public var inserted: Int
    /// Transactions updated: lines whose external id the ledger had (their amount, date, account,
    /// category, note and source line are now the line's).
    public var updated: Int
    /// Whether the transactions were written by one batch upsert (no transaction objects);
    /// false when the import went object by object, because a line is dated before a
    /// transaction the file does not hold.
    public var usedBatchUpsert: Bool
    /// Lines skipped because ``PurgeService`` deleted their transactions (a ``PurgedImport`` has
    /// their external ids): their amounts are in their accounts' opening balances already, and
    /// adding them again would count them twice.
    public var skippedAsPurged: Int

    /// A summary; the import makes these for you.
    public init(lines: Int, inserted: Int, updated: Int, usedBatchUpsert: Bool, skippedAsPurged: Int = 0) {
        self.lines = lines
        self.inserted = inserted
        self.updated = updated
        self.usedBatchUpsert = usedBatchUpsert
        self.skippedAsPurged = skippedAsPurged
    }
}

/// How far an import is: reported to the `progress` closure of
/// ``ImportService/importCSV(_:file:progress:)`` as the lines are applied.
///
/// ```swift
/// try await imports.importCSV(text, file: "bank.csv") { progress in
///     print("\(progress.linesDone) of \(progress.linesTotal)")
/// }
/// ```
public struct ImportProgress: Sendable, Hashable {
    /// Lines applied so far.
    public var linesDone: Int
    /// All the data lines of the file.
    public var linesTotal: Int

    /// A report; the import makes these for you.
    public init(linesDone: Int, linesTotal: Int) {
        self.linesDone = linesDone
        self.linesTotal = linesTotal
    }

    /// The fraction done, 0 to 1 (1 for an empty file).
    public var fractionCompleted: Double {
        linesTotal == 0 ? 1 : Double(linesDone) / Double(linesTotal)
    }
}
