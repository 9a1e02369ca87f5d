import Foundation
import Strata
import StrataPostgres

/// An item of the bulk-write measurement: a unique code (so the commit's unique-index path is
/// the one measured), an indexed amount and a memo.
final class BulkItem: ManagedObject {
    override class var entityName: String { "Item" }
    @Attribute(.unique) var code = ""
    @Attribute(.indexed) var amount: Int64 = 0
    @Attribute var memo = ""
}

/// The time of one save of N updated objects and of one save of N deleted objects on the
/// PostgreSQL server of `STRATA_POSTGRES_URL` (`strata-bench --bulk-writes ROWS`, run under
/// `bash Scripts/with-postgres.sh`). Not a numbered workload: a before/after figure for the
/// set-wise writes of a commit (issue 25). Each save is timed alone; the fetch and the edits
/// before it are not.
enum BulkWrites {
    static let flag = "--bulk-writes"

    static func main(_ arguments: [String]) async throws {
        guard let url = ProcessInfo.processInfo.environment[BenchmarkPostgres.variable] else {
            throw BenchmarkError.usage("\(flag) needs \(BenchmarkPostgres.variable)")
        }
        let rows = arguments.first.flatMap { Int($0) } ?? 100_000
        let schemaName = "strata_bulk_\(String(UInt32.random(in: 0...UInt32.max), radix: 16))"
        let container = try PersistentContainer(
            schema: try Schema(version: 1, [BulkItem.self]),
            engine: .postgres(url: url, schema: schemaName, options: PostgresOptions(poolSize: 4)))
        defer { container.close() }
        let context = container.newBackgroundContext()
        let figures = try await context.perform {
            var clock = ContinuousClock.now
            for index in 0..<rows {
                let item = BulkItem(context: context)
                item.code = "c\(index)"
                item.amount = Int64(index)
                item.memo = "memo \(index)"
            }
            try context.save()
            let insert = ContinuousClock.now - clock
            context.reset()
            for item in try context.fetch(FetchRequest<BulkItem>()) {
                item.amount += 1
                item.memo = "updated \(item.amount)"
            }
            clock = ContinuousClock.now
            try context.save()
            let update = ContinuousClock.now - clock
            context.reset()
            for item in try context.fetch(FetchRequest<BulkItem>()) { context.delete(item) }
            clock = ContinuousClock.now
            try context.save()
            let delete = ContinuousClock.now - clock
            let left = try context.count(for: FetchRequest<BulkItem>())
            return (insert, update, delete, left)
        }
        print("bulk writes on PostgreSQL, \(rows) rows, one save each:")
        print("  insert \(figures.0)")
        print("  update \(figures.1)")
        print("  delete \(figures.2)")
        print("  rows left: \(figures.3)")
    }
}
