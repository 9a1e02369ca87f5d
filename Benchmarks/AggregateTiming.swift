import CSQLite
import Foundation
import Strata
import StrataStorage

/// `strata-bench --aggregate [ROWS] [PAD] [ENGINE…]`: `StoreReader.aggregate(_:)` (the engine's
/// own) against the reference fold over `forEachRow` (the default every engine had before it), on
/// ROWS rows of the benchmark schema (default 1,000,000) with 20 memo groups, each memo padded
/// with PAD bytes (default 0; a long memo shows what decoding only the used columns saves); on
/// SQLite also the raw `SELECT memo, sum(amount) … GROUP BY memo`. The engines are sqlite and lmdb,
/// and postgres when `STRATA_POSTGRES_URL` is set, unless named. Prints the best of three runs of
/// each, in milliseconds.
enum AggregateTiming {
    static let flag = "--aggregate"

    static func run(_ arguments: [String]) throws {
        let rows = arguments.first.flatMap { Int($0) } ?? 1_000_000
        let pad = arguments.dropFirst().first.flatMap { Int($0) } ?? 0
        var engines = arguments.dropFirst(2).compactMap { EngineChoice(rawValue: $0) }
        if let url = ProcessInfo.processInfo.environment[BenchmarkPostgres.variable] {
            BenchmarkPostgres.url = url
            if engines.isEmpty { engines = [.sqlite, .lmdb, .postgres] }
        }
        if engines.isEmpty { engines = [.sqlite, .lmdb] }
        for engine in engines { try measure(engine, rows: rows, pad: String(repeating: "x", count: pad)) }
    }

    private static func measure(_ choice: EngineChoice, rows: Int, pad: String) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("strata-aggregate-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { removeScratch(directory) }
        let storeSchema = try BenchmarkSchema.make().storeSchema
        guard let entity = storeSchema.entities.first(where: { $0.name == "Row" }) else { return }
        func column(_ name: String) -> Int { entity.columns.firstIndex { $0.name == name } ?? -1 }
        let amount = column("amount")
        let memo = column("memo")
        let date = column("date")
        let engine = try StrataStore.configuration(choice, in: directory).open(storeSchema)
        defer { engine.close() }
        let insertStart = Date()
        var next = 0
        while next < rows {
            let count = min(50_000, rows - next)
            let keys = try engine.allocateKeys(entity: entity.number, count: count)
            var changes = ChangeSet()
            for (offset, key) in keys.enumerated() {
                let index = next + offset
                var values = ContiguousArray<StoredValue>(repeating: .null, count: entity.columns.count)
                values[amount] = .integer(Int64(index % 1000) - 500)
                values[memo] = .text("category \(index % 20)\(pad)")
                values[date] = .real(Double(index))
                changes.inserts.append(RowWrite(entity: entity.number, key: key, expectedVersion: 0, values: values))
            }
            try engine.commit(changes)
            next += count
        }
        let seconds = Int(Date().timeIntervalSince(insertStart))
        print("\(choice): \(rows) rows (memo padded by \(pad.utf8.count) bytes) inserted in \(seconds) s")
        let plans = [
            (
                "memo, sum(amount)",
                AggregatePlan(entity: entity.number, groupBy: [memo], functions: [.sum(column: amount)])
            ),
            (
                "memo, count, sum, avg(amount), max(date)",
                AggregatePlan(
                    entity: entity.number, groupBy: [memo],
                    functions: [.count, .sum(column: amount), .average(column: amount), .maximum(column: date)])
            ),
            ("sum(amount), no group", AggregatePlan(entity: entity.number, functions: [.sum(column: amount)])),
        ]
        let reader = try engine.makeReader()
        defer { reader.close() }
        for (label, plan) in plans {
            var engineResult: [AggregateRow] = []
            var foldResult: [AggregateRow] = []
            // Interleaved, so that a busy machine slows both alike.
            var own = Int.max
            var fold = Int.max
            for _ in 0..<3 {
                own = min(own, try best { engineResult = try reader.aggregate(plan) })
                fold = min(fold, try best { foldResult = try reader.foldAggregate(plan) })
            }
            let same = engineResult == foldResult ? "same result" : "RESULTS DIFFER"
            print("\(choice) \(label): aggregate(_:) \(own) ms, reference fold \(fold) ms (\(same))")
        }
        // What the fold costs beyond reading: the scan and row decoding alone.
        var scanned = 0
        let scan = try best(runs: 3) {
            try reader.forEachRow(for: FetchPlan(entity: entity.number, inKeyOrder: false)) { _ in scanned += 1 }
        }
        print("\(choice) forEachRow over every row, body empty: \(scan) ms")
        if choice == .sqlite {
            let path = directory.appendingPathComponent("store.sqlite").path
            let raw = try best(runs: 3) { try rawSQLite(path) }
            print("sqlite raw SELECT memo, sum(amount) FROM Row GROUP BY memo ORDER BY memo: \(raw) ms")
        }
    }

    /// The best of `runs` runs, in milliseconds.
    private static func best(runs: Int = 1, _ body: () throws -> Void) throws -> Int {
        var times: [Double] = []
        for _ in 0..<runs {
            let start = DispatchTime.now().uptimeNanoseconds
            try body()
            times.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6)
        }
        return Int(times.min() ?? 0)
    }

    /// The raw query on its own connection, stepping every row.
    private static func rawSQLite(_ path: String) throws {
        var db: OpaquePointer?
        guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, nil) == SQLITE_OK else {
            throw BenchmarkError.mismatch("raw SQLite cannot open \(path)")
        }
        defer { sqlite3_close(db) }
        var statement: OpaquePointer?
        let sql = "SELECT \"memo\", sum(\"amount\") FROM \"Row\" GROUP BY \"memo\" ORDER BY \"memo\""
        guard sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK else {
            throw BenchmarkError.mismatch("raw SQLite cannot prepare \(sql)")
        }
        defer { sqlite3_finalize(statement) }
        var total: Int64 = 0
        while sqlite3_step(statement) == SQLITE_ROW { total &+= sqlite3_column_int64(statement, 1) }
        if total == .min { print("") }
    }
}
