import Foundation
public import Strata

/// Imports transactions from a CSV file (``LedgerCSV``): an upsert keyed on each line's external
/// id, the whole file in one unit of work.
///
/// A line whose external id the ledger does not have adds a transaction; one whose id it has
/// updates that transaction (amount, date, account, category, note) instead of adding a second.
/// Each imported transaction keeps its raw line as an ``ImportLine`` (``Transaction/source``).
/// The balances of every account touched are brought up to date in the same save.
///
/// When the lines come after every other transaction of the accounts they touch (a new
/// statement, or a re-import of the same lines), the transactions are written by one batch
/// upsert (`batchInsert(…, onConflict: .update(matching: [\.externalID], …))`) with no
/// transaction objects built, and the running balances are computed from values. Otherwise (a
/// line dated before a transaction the file does not hold) the import goes object by object,
/// since the running balances of those later transactions change too. Any bad line
/// (malformed, an unknown account, an external id twice in the file) refuses the whole file:
/// nothing is written. A line whose transaction ``PurgeService`` deleted (a ``PurgedImport``
/// has its external id) is skipped: its amount is in its account's opening balance already; one
/// that now says another amount, day or account refuses the file
/// (``ImportLineProblem/changedAfterPurge(_:was:)``).
///
/// ```swift
/// let imports = ImportService(contexts: container)
/// let text = try String(contentsOf: fileURL, encoding: .utf8)
/// let summary = try await imports.importCSV(text, file: fileURL.lastPathComponent)
/// print("\(summary.inserted) added, \(summary.updated) updated")
/// ```
public struct ImportService: Sendable {
    /// Where the service gets a fresh context for each call.
    public let contexts: any ContextFactory

    /// - Parameter contexts: usually a container opened with ``Strata/PersistentContainer/init(ledger:progress:)``.
    public init(contexts: any ContextFactory) {
        self.contexts = contexts
    }

    /// Imports a CSV file's text.
    ///
    /// ```swift
    /// try await imports.importCSV(text, file: "bank.csv") { progress in
    ///     print(Int(progress.fractionCompleted * 100), "%")
    /// }
    /// ```
    /// - Parameters:
    ///   - text: the whole file, in ``LedgerCSV``'s format.
    ///   - file: the file's name, kept in each ``ImportLine``.
    ///   - progress: called as lines are applied (from the context's queue), at most about a
    ///     hundred times; the unit of work may re-run after a conflict, reporting again from 0.
    /// - Returns: how many lines were read, added, updated and skipped as purged.
    /// - Throws: ``LedgerError/importLineRefused(line:_:)`` naming the first bad line,
    ///   ``LedgerError/insufficientFunds(account:available:attemptedBalance:currency:)`` when the
    ///   file would overdraw an account that forbids it (a balance that would go past 64 bits
    ///   refuses the line that takes it there, as ``ImportLineProblem/invalidAmount(_:reason:)``),
    ///   and storage errors (`StrataError`). On any error nothing is written.
    @discardableResult
    public func importCSV(
        _ text: String, file: String, progress: (@Sendable (ImportProgress) -> Void)? = nil
    ) async throws -> ImportSummary {
        let lines = try LedgerCSV.parse(text)
        let importedAt = Date()
        return try await contexts.performUnitOfWork { context in
            try Self.apply(lines, file: file, importedAt: importedAt, in: context, progress: progress)
        }
    }

    /// Applies checked lines in `context` and saves: as one batch upsert when the lines come
    /// after every other transaction of the accounts they touch (the usual statement import,
    /// and any re-import), else object by object so that later running balances are
    /// recalculated. Call inside `perform`.
    static func apply(
        _ lines: [LedgerCSV.Line], file: String, importedAt: Date, in context: ObjectContext,
        progress: (@Sendable (ImportProgress) -> Void)?
    ) throws -> ImportSummary {
        let accounts = try accountsByName(for: lines, in: context)
        // A purged transaction's amount is in its account's opening balance: its line is skipped
        // (or refused, when it now says something else about the transaction).
        let kept = try PurgedImportIDs(externalIDs: lines.map(\.externalID), in: context).kept(lines)
        var summary: ImportSummary
        if kept.isEmpty {
            summary = ImportSummary(lines: 0, inserted: 0, updated: 0, usedBatchUpsert: false)
        } else if let plan = try ImportBatchPlan(
            lines: kept, accounts: accounts,
            stored: try StoredImportRows(externalIDs: kept.map(\.externalID), in: context), in: context)
        {
            summary = try plan.run(file: file, importedAt: importedAt, in: context, progress: progress)
        } else {
            summary = try applyObjects(
                kept, accounts: accounts, file: file, importedAt: importedAt, in: context, progress: progress)
        }
        summary.lines = lines.count
        summary.skippedAsPurged = lines.count - kept.count
        return summary
    }

    /// The object path: each line's transaction fetched or inserted, then every touched
    /// account's balances recalculated. Call inside `perform`.
    static func applyObjects(
        _ lines: [LedgerCSV.Line], accounts: [String: Account], file: String, importedAt: Date,
        in context: ObjectContext, progress: (@Sendable (ImportProgress) -> Void)?
    ) throws -> ImportSummary {
        let existing = try transactionsByExternalID(lines.map(\.externalID), in: context)
        var touched: [ObjectID: Account] = [:]
        // For an overflow's message: each line's transaction, and each account's first line.
        var lineOf: [ObjectIdentifier: LedgerCSV.Line] = [:]
        var firstLineOn: [ObjectID: LedgerCSV.Line] = [:]
        var inserted = 0
        let step = max(1, lines.count / 100)
        progress?(ImportProgress(linesDone: 0, linesTotal: lines.count))
        for (index, line) in lines.enumerated() {
            guard let account = accounts[line.account] else { continue }
            let transaction: Transaction
            if let found = existing[line.externalID] {
                transaction = found
                if let previous = found.account, previous != account {
                    touched[previous.objectID] = previous
                    if firstLineOn[previous.objectID] == nil { firstLineOn[previous.objectID] = line }
                }
            } else {
                transaction = Transaction(context: context)
                transaction.externalID = line.externalID
                inserted += 1
            }
            transaction.amount = line.amount
            transaction.date = line.date
            transaction.note = line.note
            transaction.category = line.category ?? Transaction.suggestedCategory(forNote: line.note)
            transaction.account = account
            let source = transaction.source ?? ImportLine(context: context)
            source.fill(from: line, file: file, importedAt: importedAt)
            transaction.source = source
            touched[account.objectID] = account
            lineOf[ObjectIdentifier(transaction)] = line
            if firstLineOn[account.objectID] == nil { firstLineOn[account.objectID] = line }
            if (index + 1) % step == 0 || index + 1 == lines.count {
                progress?(ImportProgress(linesDone: index + 1, linesTotal: lines.count))
            }
        }
        for account in touched.values.sorted(by: { $0.name < $1.name }) {
            try account.recalculateBalances { ordered, index in
                // The line whose amount is the last one added before the balance went past
                // Int64: the overflowing transaction's own, or the latest line before it.
                let line =
                    ordered[...index].reversed().lazy.compactMap { lineOf[ObjectIdentifier($0)] }.first
                    ?? firstLineOn[account.objectID] ?? lines[0]
                return balanceOutOfRange(account, line: line)
            }
        }
        try context.saveLedger()
        return ImportSummary(
            lines: lines.count, inserted: inserted, updated: lines.count - inserted, usedBatchUpsert: false)
    }

    /// The error of an import that would take `account`'s balance past `Int64`, naming `line`.
    static func balanceOutOfRange(_ account: Account, line: LedgerCSV.Line) -> LedgerError {
        let reason =
            "with it, the balance of \(account.name) would go past what a ledger can hold "
            + "(at most \(MinorUnits.format(.max)) either way); correct the amount or split it across accounts"
        return .importLineRefused(line: line.lineNumber, .invalidAmount(MinorUnits.format(line.amount), reason: reason))
    }

    /// The accounts the lines name, by name.
    /// - Throws: ``LedgerError/importLineRefused(line:_:)`` with
    ///   ``ImportLineProblem/unknownAccount(_:)`` for the first line naming no account.
    static func accountsByName(for lines: [LedgerCSV.Line], in context: ObjectContext) throws -> [String: Account] {
        let names = Array(Set(lines.map(\.account)))
        let found = try context.fetch(FetchRequest<Account>(predicate: #Predicate { names.contains($0.name) }))
        let accounts = Dictionary(found.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        if let unknown = lines.first(where: { accounts[$0.account] == nil }) {
            throw LedgerError.importLineRefused(line: unknown.lineNumber, .unknownAccount(unknown.account))
        }
        return accounts
    }

    /// The transactions that already have one of `ids`, by external id.
    static func transactionsByExternalID(_ ids: [String], in context: ObjectContext) throws -> [String: Transaction] {
        var found: [String: Transaction] = [:]
        for ids in ExternalIDSlices.of(ids) {
            let slice = ids.map { Optional($0) }
            let request = FetchRequest<Transaction>(predicate: #Predicate { slice.contains($0.externalID) })
            for transaction in try context.fetch(request) {
                if let id = transaction.externalID { found[id] = transaction }
            }
        }
        return found
    }
}
