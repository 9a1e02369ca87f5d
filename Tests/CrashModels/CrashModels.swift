public import Strata

/// The model the crash-safety test and its writer process share: ten accounts whose transfers
/// are recorded as numbered entries, so a reopened store can be checked against what the
/// writer acknowledged.
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

/// The crash model's schema, version and contents fixed.
public enum CrashModel {
    /// Ten accounts open with this balance each.
    public static let openingBalance: Int64 = 1_000
    /// How many accounts the writer creates.
    public static let accountCount = 10

    /// The schema both sides open the store with.
    public static func schema() throws -> Schema {
        try Schema(version: 1, [CrashAccount.self, CrashEntry.self])
    }
}
