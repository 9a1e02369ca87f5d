public import Foundation

/// Everything the ledger refuses to do, with a message that says what to do instead.
///
/// Services throw these for domain problems. Storage problems (a full disk, an I/O failure)
/// come through unchanged as `StrataError`. Save conflicts and a busy store never reach you:
/// the services re-run the unit of work, and only when its retries run out do you get
/// `StrataError.retriesExhausted(attempts:errors:)`, listing why each attempt failed.
///
/// ```swift
/// do {
///     try await transactions.transfer(from: wallet.id, to: savings.id, amount: 50_000, note: "Save")
/// } catch let error as LedgerError {
///     print(error)   // "Insufficient funds in Wallet: …"
/// }
/// ```
public enum LedgerError: Error, Sendable, Hashable {
    /// No account has this URI (it was deleted, or the URI is from another store's history).
    case unknownAccount(String)
    /// No transaction has this URI.
    case unknownTransaction(String)
    /// The text is not the URI of an object of the expected kind in this store.
    case invalidURI(String, reason: String)
    /// The amount is unusable: zero, negative where a positive one is needed, malformed, or
    /// beyond 64 bits.
    case invalidAmount(String, reason: String)
    /// An account name is empty or too long.
    case invalidName(String)
    /// A currency code is not three uppercase ASCII letters.
    case invalidCurrency(String)
    /// Money would move between accounts of different currencies.
    case currencyMismatch(source: String, sourceCurrency: String, target: String, targetCurrency: String)
    /// The account does not allow overdraft and the change would make its balance negative.
    case insufficientFunds(account: String, available: Int64, attemptedBalance: Int64, currency: String)
    /// Another account already has this name.
    case duplicateAccountName(String)
    /// A transfer names the same account on both sides.
    case sameAccount(String)
    /// The account still has transactions, so it cannot be deleted.
    case accountHasTransactions(account: String, count: Int)
    /// A line of an import file is unusable; the whole file was refused and nothing was written.
    /// `line` counts from 1, the header included.
    case importLineRefused(line: Int, ImportLineProblem)
    /// A date or month is not in the form the ledger reads (`YYYY-MM-DD`, or `YYYY-MM` for a month).
    case invalidDate(String, expected: String)
    /// The amounts of `account`'s transactions dated before `before` add up to more than the
    /// ledger holds (an `Int64` of minor units, either way), so ``PurgeService`` cannot move them
    /// into the opening balance at once. Nothing was written; an earlier cut-off first moves less.
    case purgeSumOutOfRange(account: String, before: Date)
    /// The amounts of `month`'s transactions of `account` with `category` (nil: those without
    /// one) add up to more than the ledger holds (an `Int64` of minor units, either way), so
    /// ``ReportService`` cannot total them.
    case reportSumOutOfRange(month: LedgerMonth, account: String, category: String?)
}

extension LedgerError: CustomStringConvertible {
    /// The range of a sum of amounts, for the messages of sums past it.
    private static var sumLimit: String { "at most \(MinorUnits.format(.max)) either way" }

    public var description: String {
        switch self {
        case .unknownAccount(let uri):
            return "No account has the URI \(uri). It may have been deleted; list the accounts to find the right URI."
        case .unknownTransaction(let uri):
            return
                """
                No transaction has the URI \(uri). It may have been deleted; show the account's history to find \
                the right URI.
                """
        case .invalidURI(let uri, let reason):
            return
                """
                \(String(reflecting: uri)) is not a usable URI: \(reason). Use a URI exactly as the ledger gave \
                it (an AccountSnapshot or TransactionRecord id).
                """
        case .invalidAmount(let amount, let reason):
            return "Invalid amount \(String(reflecting: amount)): \(reason)."
        case .invalidName(let name):
            return "Invalid account name \(String(reflecting: name)): use 1 to 100 characters that are not all spaces."
        case .invalidCurrency(let code):
            return
                """
                Invalid currency \(String(reflecting: code)): use a three-letter ISO 4217 code in capitals, such \
                as USD or EUR.
                """
        case .currencyMismatch(let source, let sourceCurrency, let target, let targetCurrency):
            return
                """
                \(source) is in \(sourceCurrency) but \(target) is in \(targetCurrency); the ledger does not \
                convert currencies. Use accounts with the same currency.
                """
        case .insufficientFunds(let account, let available, let attempted, let currency):
            return
                """
                Insufficient funds in \(account): the balance is \(MinorUnits.format(available)) \(currency) and \
                this would take it to \(MinorUnits.format(attempted)) \(currency), but the account does not allow \
                overdraft. Use a smaller amount or add money first.
                """
        case .duplicateAccountName(let name):
            return "An account named \(String(reflecting: name)) already exists. Choose another name."
        case .sameAccount(let name):
            return "A transfer needs two different accounts, but both sides are \(name). Choose another target account."
        case .accountHasTransactions(let account, let count):
            return
                """
                \(account) still has \(count) transaction(s), so it cannot be deleted. Delete or move its \
                transactions first.
                """
        case .importLineRefused(let line, let problem):
            return
                """
                Line \(line) of the import file: \(problem). Nothing was imported; fix the line and import the \
                file again.
                """
        case .invalidDate(let text, let expected):
            return "Invalid date \(String(reflecting: text)): write it as \(expected)."
        case .purgeSumOutOfRange(let account, let before):
            return
                """
                The transactions of \(account) dated before \(LedgerDay.format(before)) add up to more than the \
                ledger can hold (\(Self.sumLimit)), so they cannot be moved into its opening balance at once. \
                Nothing was purged; purge up to an earlier day first, then up to this one.
                """
        case .reportSumOutOfRange(let month, let account, let category):
            let which = category.map { "in the category \(String(reflecting: $0))" } ?? "without a category"
            return
                """
                The \(month) transactions of \(account) \(which) add up to more than the ledger can hold \
                (\(Self.sumLimit)), so the month cannot be reported. Look for a wrongly entered amount among \
                them (ledger history \(account)) and correct it.
                """
        }
    }
}
