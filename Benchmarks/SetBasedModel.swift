import Foundation
import Strata

/// An entry of the set-based workloads (issue 25): an indexed category, an amount and a note,
/// with a unique external ID for the upsert and lines that go with it (the delete's cascade).
final class BenchEntry: ManagedObject {
    override class var entityName: String { "Entry" }
    @Attribute(.unique) var externalID: Int64 = 0
    @Attribute(.indexed) var category = ""
    @Attribute var amount: Int64 = 0
    @Attribute var note = ""
    @Relationship(inverse: \BenchEntryLine.entry, deleteRule: .cascade) var lines: RelatedObjects<BenchEntryLine>
}

/// A line of an entry: deleted with it (`.cascade`).
final class BenchEntryLine: ManagedObject {
    override class var entityName: String { "EntryLine" }
    @Attribute var label = ""
    @Relationship var entry: BenchEntry?
}

enum SetBasedSchema {
    /// The schema of every Strata store of workloads 15–20.
    static func make() throws -> Schema {
        try Schema(version: 1, [BenchEntry.self, BenchEntryLine.self])
    }
}
