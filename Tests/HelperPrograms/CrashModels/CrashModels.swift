public import Strata

/// The model the crash-safety test and its writer process share: ten accounts whose transfers
/// are recorded as numbered entries, so a reopened store can be checked against what the
/// writer acknowledged, and memos of the last transfers.
public final class CrashAccount: ManagedObject {
    override public class var entityName: String { "Account" }
    /// The account number, 0 to 9.
    @Attribute(.unique) public var number = 0
    /// Opening balance plus the account's entries.
    @Attribute public var balance: Int64 = 0
    /// The entries posted to the account.
    @Relationship(inverse: \CrashEntry.account, deleteRule: .deny) public var entries: RelatedObjects<CrashEntry>
}

/// One half of a transfer, numbered in commit order.
public final class CrashEntry: ManagedObject {
    override public class var entityName: String { "Entry" }
    /// 1, 2, 3, … with no gaps: two per acknowledged transfer.
    @Attribute(.unique) public var sequence: Int64 = 0
    /// The amount posted.
    @Attribute public var amount: Int64 = 0
    /// The account posted to.
    @Relationship public var account: CrashAccount?
}

/// A note of one transfer, kept for the last ``CrashModel/memoWindow`` transfers only: each
/// transfer inserts its memo, updates the previous one and deletes the one that fell out of the
/// window, so the writer's saves insert, update and delete and the history records all three.
public final class CrashMemo: ManagedObject {
    override public class var entityName: String { "Memo" }
    /// The transfer's sequence: its second entry's. Kept in the deletion's tombstone.
    @Attribute([.unique, .preserveAfterDeletion]) public var sequence: Int64 = 0
    /// The next transfer's sequence (`sequence + 2`) once it committed, else 0.
    @Attribute public var followedBy: Int64 = 0
}

/// The crash model's schema, version and contents fixed.
public enum CrashModel {
    /// Ten accounts open with this balance each.
    public static let openingBalance: Int64 = 1_000
    /// How many accounts the writer creates.
    public static let accountCount = 10
    /// How many transfers keep their memo.
    public static let memoWindow: Int64 = 3
    /// The history author of the save that opens the accounts.
    public static let setupAuthor = "setup"

    /// The history author of the transfer whose second entry is `sequence`.
    public static func transferAuthor(_ sequence: Int64) -> String { "transfer \(sequence)" }

    /// The schema both sides open the store with.
    public static func schema() throws -> Schema {
        try Schema(version: 1, [CrashAccount.self, CrashEntry.self, CrashMemo.self])
    }
}
