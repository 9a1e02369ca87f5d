import Foundation
import Strata

/// The batch path of an import: every line written by one batch upsert keyed on the external
/// id, with its running balance computed from values, and the touched accounts' balances set
/// in the same save.
///
/// It applies when, on every account the file touches (where a line puts a transaction, or
/// where a line's transaction is now), every transaction the file does not hold is dated
/// strictly before the file's earliest date there: then no other transaction's running balance
/// changes. ``init(lines:accounts:stored:in:)`` returns nil otherwise, and the import goes
/// object by object.
struct ImportBatchPlan {
    let lines: [LedgerCSV.Line]
    let accounts: [String: Account]
    let stored: StoredImportRows
    /// Every account the file touches, by ID.
    let touched: [ObjectID: Account]
    /// Each touched account's transactions from the file's earliest date there on: all of them
    /// lines of the file. Guarded at the save.
    let regions: [FetchRequest<Transaction>]
    /// The running balance of each line's transaction, by line index.
    let runningBalances: [Int64]
    /// The balance of each touched account after the import.
    let balances: [ObjectID: Int64]

    /// Plans the batch, or returns nil when a transaction the file does not hold would need its
    /// running balance changed (or a sum would overflow: the object path reports it). Call
    /// inside `perform`, before any change to transactions.
    /// - Throws: ``LedgerError/insufficientFunds(account:available:attemptedBalance:currency:)``
    ///   when an account that forbids overdraft would end below zero, and storage errors.
    init?(
        lines: [LedgerCSV.Line], accounts: [String: Account], stored: StoredImportRows, in context: ObjectContext
    ) throws {
        var touched: [ObjectID: Account] = [:]
        var earliest: [ObjectID: Date] = [:]
        var storedOn: [ObjectID: (count: Int, sum: Int64)] = [:]
        for line in lines {
            guard let account = accounts[line.account] else { return nil }
            touched[account.objectID] = account
            earliest[account.objectID] = min(earliest[account.objectID] ?? line.date, line.date)
            guard let row = stored.rows[line.externalID] else { continue }
            guard let previous = row.account else { return nil }
            if touched[previous] == nil {
                touched[previous] = try context.existingObject(with: previous, as: Account.self)
            }
            earliest[previous] = min(earliest[previous] ?? row.date, row.date)
            let entry = storedOn[previous] ?? (0, 0)
            let (sum, overflow) = entry.sum.addingReportingOverflow(row.amount)
            guard !overflow else { return nil }
            storedOn[previous] = (entry.count + 1, sum)
        }

        // From each account's earliest date on, only the file's own transactions.
        var regions: [FetchRequest<Transaction>] = []
        for (accountID, from) in earliest {
            let region = FetchRequest<Transaction>(
                predicate: #Predicate { $0.$account == accountID && $0.date >= from })
            guard try context.count(for: region) == storedOn[accountID]?.count ?? 0 else { return nil }
            regions.append(region)
        }

        // Each account's lines in date order; ties in key order: stored transactions keep their
        // keys, new ones get larger keys in file order. A tie between a stored and a new
        // transaction could go either way (keys come in blocks), so it takes the object path.
        var order = Array(lines.indices)
        let keyOf = { (index: Int) in stored.rows[lines[index].externalID]?.id.primaryKey }
        order.sort {
            let (left, right) = (lines[$0], lines[$1])
            if left.account != right.account { return left.account < right.account }
            if left.date != right.date { return left.date < right.date }
            return (keyOf($0) ?? .max, $0) < (keyOf($1) ?? .max, $1)
        }
        for (first, second) in zip(order, order.dropFirst())
        where lines[first].account == lines[second].account && lines[first].date == lines[second].date {
            if (keyOf(first) == nil) != (keyOf(second) == nil) { return nil }
        }

        var running: [ObjectID: Int64] = [:]
        for (accountID, account) in touched {
            let (base, overflow) = account.balance.subtractingReportingOverflow(storedOn[accountID]?.sum ?? 0)
            guard !overflow else { return nil }
            running[accountID] = base
        }
        var runningBalances = [Int64](repeating: 0, count: lines.count)
        for index in order {
            guard let accountID = accounts[lines[index].account]?.objectID, let before = running[accountID] else {
                return nil
            }
            let (after, overflow) = before.addingReportingOverflow(lines[index].amount)
            guard !overflow else { return nil }
            running[accountID] = after
            runningBalances[index] = after
        }
        for (accountID, balance) in running {
            guard let account = touched[accountID], !account.allowsOverdraft, balance < 0 else { continue }
            throw LedgerError.insufficientFunds(
                account: account.name, available: account.balance, attemptedBalance: balance,
                currency: account.currency)
        }

        self.lines = lines
        self.accounts = accounts
        self.stored = stored
        self.touched = touched
        self.regions = regions
        self.runningBalances = runningBalances
        self.balances = running
    }

    /// Writes the plan: the balances and source lines as objects, the transactions as one batch
    /// upsert, in one save. Call inside the `perform` that planned it.
    func run(
        file: String, importedAt: Date, in context: ObjectContext, progress: (@Sendable (ImportProgress) -> Void)?
    ) throws -> ImportSummary {
        // What the plan was computed from must not change before the save: otherwise the save
        // conflicts and the unit of work re-runs on the new state.
        for account in touched.values { try context.requireUnchanged(account) }
        for region in regions { try context.requireUnchangedResults(of: region) }
        for request in stored.requests { try context.requireUnchangedResults(of: request) }
        for (accountID, balance) in balances {
            if let account = touched[accountID], account.balance != balance { account.balance = balance }
        }

        // The source lines are objects (another entity than the batch's), with permanent IDs for
        // the rows to point at.
        var sources: [ImportLine] = []
        var fresh: [ImportLine] = []
        for line in lines {
            let source: ImportLine
            if let id = stored.rows[line.externalID]?.source {
                source = try context.existingObject(with: id, as: ImportLine.self)
            } else {
                source = ImportLine(context: context)
                fresh.append(source)
            }
            source.fill(from: line, file: file, importedAt: importedAt)
            sources.append(source)
        }
        try context.obtainPermanentIDs(for: fresh)
        let sourceIDs = sources.map(\.objectID)

        let step = max(1, lines.count / 100)
        progress?(ImportProgress(linesDone: 0, linesTotal: lines.count))
        try context.batchInsert(
            Transaction.self, from: lines.indices,
            onConflict: .update(
                matching: [\.externalID],
                setting: [\.amount, \.date, \.note, \.category, \.account, \.source, \.runningBalance])
        ) { index, row in
            let line = lines[index]
            row[\.externalID] = line.externalID
            row[\.amount] = line.amount
            row[\.date] = line.date
            row[\.note] = line.note
            row[\.category] = line.category ?? Transaction.suggestedCategory(forNote: line.note)
            row[\.runningBalance] = runningBalances[index]
            row[\.account] = accounts[line.account]?.objectID
            row[\.source] = sourceIDs[index]
            if (index + 1) % step == 0 || index + 1 == lines.count {
                progress?(ImportProgress(linesDone: index + 1, linesTotal: lines.count))
            }
        }
        try context.saveLedger()
        let inserted = context.savedBatches.first?.insertedCount ?? 0
        return ImportSummary(
            lines: lines.count, inserted: inserted, updated: lines.count - inserted, usedBatchUpsert: true)
    }
}
