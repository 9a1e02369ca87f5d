public import Strata

/// A commit the consumer crash test's producer makes: one source row per commit.
public final class ConsumerSource: ManagedObject {
    override public class var entityName: String { "Source" }
    /// 0, 1, 2, … in the producer's order.
    @Attribute public var number: Int64 = 0
}

/// What the consumer made of one source commit: one row per processing, keyed by the commit's
/// history token. Not unique on purpose: a commit processed twice shows as two rows.
public final class ConsumerProcessed: ManagedObject {
    override public class var entityName: String { "Processed" }
    /// The history token of the source commit processed.
    @Attribute(.indexed) public var sourceToken: Int64 = 0
}

/// The schema and cursor shared by the consumer crash test and the consumer process.
public enum ConsumerCrash {
    /// The history cursor the consumer moves.
    public static let cursor = "crash-consumer"

    /// The schema both sides open the store with.
    public static func schema() throws -> Schema {
        try Schema(version: 1, [ConsumerSource.self, ConsumerProcessed.self])
    }
}
