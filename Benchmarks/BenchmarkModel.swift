import Foundation
import Strata

/// An account: the "one" side of the benchmark's to-many relationship.
final class BenchAccount: ManagedObject {
    override class var entityName: String { "Account" }
    @Attribute var name = ""
    @Relationship(inverse: \BenchRow.account) var rows: RelatedObjects<BenchRow>
}

/// One benchmark row: (id, amount, memo, date, account). `amount` is indexed for workload 4.
final class BenchRow: ManagedObject {
    override class var entityName: String { "Row" }
    @Attribute(.indexed) var amount: Int64 = 0
    @Attribute var memo = ""
    @Attribute var date = Date(timeIntervalSinceReferenceDate: 0)
    @Relationship var account: BenchAccount?
}

enum BenchmarkSchema {
    /// The schema every Strata store of the benchmark uses.
    static func make() throws -> Schema {
        try Schema(version: 1, [BenchAccount.self, BenchRow.self])
    }
}
