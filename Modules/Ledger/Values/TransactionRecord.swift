public import Foundation
import Strata

/// A transaction's values at one moment: what ``TransactionService`` returns and takes.
///
/// To change a transaction, copy its record, edit the copy, and pass it to
/// ``TransactionService/update(transaction:originalAccountID:)``; set ``accountID`` to another
/// account's URI to move it there.
///
/// ```swift
/// var edited = try await transactions.transaction(coffeeURI)
/// let original = edited.accountID
/// edited.accountID = savings.id                  // move it
/// edited.note = "Coffee beans"
/// try await transactions.update(transaction: edited, originalAccountID: original)
/// ```
public struct TransactionRecord: Sendable, Hashable, Identifiable {
    /// The transaction's object URI (`strata://<store>/Transaction/p<key>`).
    public var id: String
    /// The URI of the account it belongs to.
    public var accountID: String
    /// The signed amount in minor units; positive adds money to the account.
    public var amount: Int64
    /// A free-text description.
    public var note: String
    /// What the money was for, such as `"dining"`; nil when unknown.
    public var category: String?
    /// When it happened.
    public var date: Date
    /// The account's balance just after this transaction, in minor units.
    public var runningBalance: Int64

    /// Creates a record; services make these for you, and you edit copies to call
    /// ``TransactionService/update(transaction:originalAccountID:)``.
    public init(
        id: String, accountID: String, amount: Int64, note: String, category: String? = nil, date: Date,
        runningBalance: Int64
    ) {
        self.id = id
        self.accountID = accountID
        self.amount = amount
        self.note = note
        self.category = category
        self.date = date
        self.runningBalance = runningBalance
    }

    /// Copies a saved transaction's values. Call inside its context's `perform`.
    init(_ transaction: Transaction) {
        self.init(
            id: transaction.objectID.uriString, accountID: transaction.account?.objectID.uriString ?? "",
            amount: transaction.amount, note: transaction.note, category: transaction.category,
            date: transaction.date,
            runningBalance: transaction.runningBalance)
    }
}
