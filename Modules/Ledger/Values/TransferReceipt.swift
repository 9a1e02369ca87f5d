/// The two halves of a transfer, as saved together by
/// ``TransactionService/transfer(from:to:amount:note:)``.
///
/// ```swift
/// let receipt = try await transactions.transfer(from: checking.id, to: savings.id, amount: 5_000, note: "Save")
/// print(receipt.withdrawal.runningBalance, receipt.deposit.runningBalance)
/// ```
public struct TransferReceipt: Sendable, Hashable {
    /// The negative transaction on the source account.
    public var withdrawal: TransactionRecord
    /// The positive transaction on the target account.
    public var deposit: TransactionRecord

    /// Pairs the two halves of a transfer.
    public init(withdrawal: TransactionRecord, deposit: TransactionRecord) {
        self.withdrawal = withdrawal
        self.deposit = deposit
    }
}
