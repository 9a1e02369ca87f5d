import Foundation
import Strata

/// What a purge recorded (``PurgedImport``) about an import's external ids: the lines the import
/// skips, since their amounts are in their accounts' opening balances already, or refuses, when
/// they now say something else about a purged transaction.
struct PurgedImportIDs {
    /// What was purged: the transaction's account name, day and amount.
    struct Record: Equatable {
        var account: String
        var date: Date
        var amount: Int64
    }

    /// The records of the ids asked for, by external id.
    private(set) var records: [String: Record] = [:]

    /// Reads the records of `externalIDs`, and guards them: a purge that records one of them
    /// before this import saves makes the save conflict, and the unit of work re-runs. Call
    /// inside `perform`.
    init(externalIDs: [String], in context: ObjectContext) throws {
        for slice in ExternalIDSlices.of(externalIDs) {
            let request = FetchRequest<PurgedImport>(predicate: #Predicate { slice.contains($0.externalID) })
            try context.requireUnchangedResults(of: request)
            for (id, account, date, amount) in try context.fetchValues(
                request, \.externalID, \.account, \.date, \.amount)
            {
                records[id] = Record(account: account, date: date, amount: amount)
            }
        }
    }

    /// The lines whose transactions were not purged; throws for a purged one the line changes.
    /// - Throws: ``LedgerError/importLineRefused(line:_:)`` with
    ///   ``ImportLineProblem/changedAfterPurge(_:was:)`` for the first line whose transaction was
    ///   purged with another amount, day or account.
    func kept(_ lines: [LedgerCSV.Line]) throws -> [LedgerCSV.Line] {
        guard !records.isEmpty else { return lines }
        var kept: [LedgerCSV.Line] = []
        for line in lines {
            guard let record = records[line.externalID] else {
                kept.append(line)
                continue
            }
            let now = Record(account: line.account, date: line.date, amount: line.amount)
            guard now == record else {
                let was = "\(MinorUnits.format(record.amount)) on \(record.account), \(LedgerDay.format(record.date))"
                throw LedgerError.importLineRefused(
                    line: line.lineNumber, .changedAfterPurge(line.externalID, was: was))
            }
        }
        return kept
    }
}
