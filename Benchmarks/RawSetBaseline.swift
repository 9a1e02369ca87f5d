import Foundation

/// A raw baseline of the set-based workloads 15–20 (issue 25), written straight on the C
/// library, measured beside Strata on the same data: what a careful program does with SQL (or
/// `mdb_*` calls) for the same job, each in one transaction.
///
/// The store has the same tables (or databases) and indexes as the Strata store of
/// ``SetBasedSchema``: entries keyed `1…N` with a unique index on the external ID and an index
/// on the category; lines with an index on their entry.
protocol RawSetBaseline: AnyObject {
    /// 15. Inserts every entry of the data set (keys `1…N`) in one write transaction.
    func insertEntries(_ data: SetDataset) throws
    /// Inserts the data set's lines (not timed: the fill before workloads 16–20).
    func insertLines(_ data: SetDataset) throws
    /// 16. Inserts the rows, or on a clash of external ID updates `amount` and `note`; returns
    /// the rows written.
    func upsert(_ rows: UpsertRows) throws -> Int
    /// 17. Adds `amount` to the amount of every entry of the category; returns the rows updated.
    func add(_ amount: Int64, toCategory category: String) throws -> Int
    /// 18. Deletes every entry of the category and its lines (the lines first); returns the
    /// rows deleted, lines included.
    func delete(category: String) throws -> Int
    /// 19. The sum of `amount` per category (any order).
    func sumByCategory() throws -> [(category: String, sum: Int64)]
    /// 20. Reads every column of every entry in key order, one row at a time (bounded memory);
    /// `sample` is called every 10,000 rows (the memory child reads its figures there).
    func streamEntries(sample: () -> Void) throws -> Checksum
    /// Closes the store. Idempotent.
    func close()
}

extension Checksum {
    /// Folds in one streamed entry (workload 20): every column, the category as unread bytes.
    @inline(__always)
    mutating func addEntry(externalID: Int64, category: Int, amount: Int64, note: String) {
        add(amount: amount, memo: note, date: Double(externalID))
        unread &+= category
    }

    /// The checksum of a grouped sum (workload 19): one "row" per group, in category order.
    init(groups: [(category: String, sum: Int64)]) {
        self.init()
        let ordered = groups.sorted { Array($0.category.utf8).lexicographicallyPrecedes(Array($1.category.utf8)) }
        for group in ordered { add(amount: group.sum, memo: group.category, date: 0) }
    }

    /// A checksum that holds only a count of rows (the writes of workloads 15–18).
    init(count: Int) {
        self.init()
        rows = count
    }
}

/// Opens (or creates) the raw set-based store of an engine in `directory` (on PostgreSQL: the
/// schema `schema`, by default the directory's).
func makeRawSet(
    _ engine: EngineChoice, in directory: URL, create: Bool, schema: String? = nil
) throws
    -> any RawSetBaseline
{
    switch engine {
    case .sqlite: try RawSQLiteSet(directory: directory, create: create)
    case .lmdb: try RawLMDBSet(directory: directory, create: create)
    case .postgres:
        try RawPostgresSet(schema: schema ?? BenchmarkPostgres.schema(for: directory), create: create)
    }
}
