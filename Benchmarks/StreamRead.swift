import Foundation
import Strata
import StrataPostgres
import StrataStorage

/// The peak memory of reading every row of a large PostgreSQL table through
/// `StoreReader.forEachRow` without holding the rows (`strata-bench --stream-rows ROWS`, run under
/// `bash Scripts/with-postgres.sh`). Not a numbered workload: a before/after figure for the
/// reader's streaming (issue 25). The store is filled through the engine in commits of 50,000
/// rows; then the heap is trimmed, the peak reset, and the rows read and counted.
enum StreamRead {
    static let flag = "--stream-rows"

    static let schema = StoreSchema(
        version: 1,
        entities: [
            EntitySchema(
                name: "Row", number: 0,
                columns: [
                    ColumnSchema(name: "amount", type: .int64, isOptional: false),
                    ColumnSchema(name: "memo", type: .string, isOptional: false),
                    ColumnSchema(name: "when", type: .double, isOptional: false),
                ], indexes: [])
        ], joins: [])

    static func main(_ arguments: [String]) throws {
        guard let url = ProcessInfo.processInfo.environment[BenchmarkPostgres.variable] else {
            throw BenchmarkError.usage("\(flag) needs \(BenchmarkPostgres.variable)")
        }
        let rows = arguments.first.flatMap { Int($0) } ?? 1_000_000
        let schemaName = "strata_stream_\(String(UInt32.random(in: 0...UInt32.max), radix: 16))"
        let engine = try EngineConfiguration.postgres(url: url, schema: schemaName).open(schema)
        defer { engine.close() }
        var key: Int64 = 1
        while key <= Int64(rows) {
            var changes = ChangeSet()
            let last = min(key + 49_999, Int64(rows))
            changes.inserts = (key...last).map { key in
                RowWrite(
                    entity: 0, key: key, expectedVersion: 0,
                    values: [.integer(key), .text("memo of row \(key)"), .real(Double(key) / 3)])
            }
            try engine.commit(changes)
            key = last + 1
        }
        let before = ProcessMemory.resetPeak()
        let clock = ContinuousClock.now
        let reader = try engine.makeReader()
        var count = 0
        var sum: Int64 = 0
        try reader.forEachRow(for: FetchPlan(entity: 0)) { row in
            count += 1
            sum &+= row.key
        }
        reader.close()
        let elapsed = ContinuousClock.now - clock
        let after = ProcessMemory.read()
        let megabytes = Double(after.peak - before.resident) / 1_048_576
        print("forEachRow over \(count) rows (key sum \(sum)) in \(elapsed)")
        print("  resident before \(before.resident / 1_048_576) MB, peak growth \(Int(megabytes.rounded())) MB")
    }
}
