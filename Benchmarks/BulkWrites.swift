import Foundation
import Strata
import StrataPostgres
import StrataStorage

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
/// before it are not. Then the same through the batch API (`batchUpdate`, `batchDelete` of every
/// row, staged, then saved: the save is timed).
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
            var left = try context.count(for: FetchRequest<BulkItem>())
            // The same through the batch API: rows, not objects.
            try context.batchInsert(BulkItem.self, from: 0..<rows) { index, row in
                row[\.code] = "c\(index)"
                row[\.amount] = Int64(index)
                row[\.memo] = "memo \(index)"
            }
            try context.save()
            try context.batchUpdate(BulkItem.self, where: nil, set: [.add(\.amount, 1), .value(\.memo, "updated")])
            clock = ContinuousClock.now
            try context.save()
            let batchUpdate = ContinuousClock.now - clock
            try context.batchDelete(BulkItem.self, where: nil)
            clock = ContinuousClock.now
            try context.save()
            let batchDelete = ContinuousClock.now - clock
            left += try context.count(for: FetchRequest<BulkItem>())
            return (insert, update, delete, batchUpdate, batchDelete, left)
        }
        print("bulk writes on PostgreSQL, \(rows) rows, one save each:")
        print("  insert \(figures.0)")
        print("  update \(figures.1)")
        print("  delete \(figures.2)")
        print("  batchUpdate \(figures.3)")
        print("  batchDelete \(figures.4)")
        print("  rows left: \(figures.5)")
        let engine = try engineCommits(url: url, rows: rows)
        print("the same on the engine alone (StorageEngine.commit of one change set):")
        print("  update \(engine.update)")
        print("  delete \(engine.delete)")
    }

    /// One commit of `rows` updates and one of `rows` deletes straight to the engine, without the
    /// core: the engine's own share of a save.
    static func engineCommits(url: String, rows: Int) throws -> (update: Duration, delete: Duration) {
        let schema = StoreSchema(
            version: 1,
            entities: [
                EntitySchema(
                    name: "Item", number: 0,
                    columns: [
                        ColumnSchema(name: "code", type: .string, isOptional: false),
                        ColumnSchema(name: "amount", type: .int64, isOptional: false),
                        ColumnSchema(name: "memo", type: .string, isOptional: false),
                    ],
                    indexes: [
                        IndexSchema(name: "Item_code", columns: [0], isUnique: true),
                        IndexSchema(name: "Item_amount", columns: [1], isUnique: false),
                    ])
            ], joins: [])
        let schemaName = "strata_bulk_engine_\(String(UInt32.random(in: 0...UInt32.max), radix: 16))"
        let engine = try EngineConfiguration.postgres(url: url, schema: schemaName).open(schema)
        defer { engine.close() }
        func row(_ key: Int64, version: Int64, amount: Int64) -> RowWrite {
            RowWrite(
                entity: 0, key: key, expectedVersion: version,
                values: [.text("c\(key)"), .integer(amount), .text("memo \(amount)")])
        }
        let keys = 1...Int64(rows)
        var insert = ChangeSet()
        insert.inserts = keys.map { row($0, version: 0, amount: $0) }
        try engine.commit(insert)
        var update = ChangeSet()
        update.updates = keys.map { row($0, version: 1, amount: $0 + 1) }
        var clock = ContinuousClock.now
        try engine.commit(update)
        let updated = ContinuousClock.now - clock
        var delete = ChangeSet()
        delete.deletes = keys.map { RowVersionCheck(entity: 0, key: $0, expectedVersion: 2) }
        clock = ContinuousClock.now
        try engine.commit(delete)
        return (updated, ContinuousClock.now - clock)
    }
}
