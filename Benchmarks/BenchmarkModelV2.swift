import Foundation
import Strata

/// Version 2 of the benchmark's model, for workload 9: `Row.memo` renamed to `note`
/// (`originalName:`) and a new attribute with a default, `flag`.
enum BenchmarkSchemaV2 {
    static let flagDefault: Int64 = 7

    final class Account: ManagedObject {
        override class var entityName: String { "Account" }
        @Attribute var name = ""
        @Relationship(inverse: \Row.account) var rows: RelatedObjects<Row>
    }

    final class Row: ManagedObject {
        override class var entityName: String { "Row" }
        @Attribute(.indexed) var amount: Int64 = 0
        @Attribute(originalName: "memo") var note = ""
        @Attribute var date = Date(timeIntervalSinceReferenceDate: 0)
        @Relationship var account: Account?
        @Attribute var flag: Int64 = BenchmarkSchemaV2.flagDefault
    }

    static func make() throws -> Schema {
        try Schema(version: 2, [Account.self, Row.self])
    }
}
