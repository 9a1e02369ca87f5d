/// Why a line of an import file was refused: the reason half of
/// ``LedgerError/importLineRefused(line:_:)``.
///
/// ```swift
/// do {
///     try await imports.importCSV(text, file: "bank.csv")
/// } catch LedgerError.importLineRefused(let line, .unknownAccount(let name)) {
///     print("line \(line) names \(name), which is not an account")
/// }
/// ```
public enum ImportLineProblem: Error, Sendable, Hashable, CustomStringConvertible {
    /// The first line is not the header ``LedgerCSV/header``.
    case badHeader(found: String)
    /// The line has another number of fields than the header's six.
    case wrongFieldCount(expected: Int, found: Int)
    /// A quoted field is not closed on its line (a field cannot span lines), or text follows
    /// its closing quote.
    case badQuoting
    /// The external id is empty.
    case missingExternalID
    /// Another line of the same file has this external id (`firstLine` is that line's number).
    case duplicateExternalID(String, firstLine: Int)
    /// The account column names no account.
    case unknownAccount(String)
    /// The date is not `YYYY-MM-DD`.
    case invalidDate(String)
    /// The amount is not a decimal with at most two digits after the point, is zero or past
    /// 64 bits, or would take its account's balance past 64 bits (`reason` says which).
    case invalidAmount(String, reason: String)
    /// ``PurgeService`` deleted this external id's transaction, and the line now says something
    /// else about it (amount, day or account): the purged amount is in the opening balance, so
    /// the change cannot be applied. `was` describes the purged transaction.
    case changedAfterPurge(String, was: String)

    /// What is wrong with the line, in words that say how to fix it.
    public var description: String {
        switch self {
        case .badHeader(let found):
            return "the header must be \(String(reflecting: LedgerCSV.header)), not \(String(reflecting: found))"
        case .wrongFieldCount(let expected, let found):
            return
                """
                it has \(found) field(s) where \(expected) are needed (quote a field that contains a comma: \
                "Dinner, with friends")
                """
        case .badQuoting:
            return
                """
                a quoted field is not closed on its line, or text follows its closing quote (write a quote \
                inside a quoted field as "")
                """
        case .missingExternalID:
            return "the external id is empty; every line needs the id its transaction has in the source system"
        case .duplicateExternalID(let id, let firstLine):
            return "the external id \(String(reflecting: id)) is also on line \(firstLine); each id may appear once"
        case .unknownAccount(let name):
            return
                """
                no account is named \(String(reflecting: name)); open it first (ledger account add) or correct \
                the name
                """
        case .invalidDate(let text):
            return "the date \(String(reflecting: text)) is not a day written as YYYY-MM-DD, such as 2024-03-31"
        case .invalidAmount(let text, let reason):
            return "the amount \(String(reflecting: text)) is unusable: \(reason)"
        case .changedAfterPurge(let id, let was):
            return
                """
                the transaction \(String(reflecting: id)) was purged as \(was), and its amount is in the opening \
                balance now; the line says otherwise. Remove the line, or correct the account by hand (ledger add)
                """
        }
    }
}
