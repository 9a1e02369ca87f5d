import Foundation

/// A workload written straight on a C storage library, measured beside Strata on the same data.
///
/// The store has the same tables (or databases) and the same two indexes as the Strata store
/// (row amount, row account), since workloads 4 and 5 need them. Every method runs in one
/// transaction and reads every column of every row it finds into a plain Swift ``RawRow``, as
/// Strata loads whole rows into objects.
protocol RawBaseline: AnyObject {
    /// Creates an empty store in `directory` holding the data set's accounts.
    init(directory: URL, dataset: Dataset) throws

    /// 1. Inserts every row of the data set in one write transaction.
    func insertRows(_ data: Dataset) throws
    /// 2. Reads every row in key order.
    func fetchAll() throws -> Checksum
    /// Reads every row in key order into one array, held while `body` runs (workload 14
    /// measures the memory of holding them); ``fetchAll()`` is this with a checksum as `body`.
    func withAllRows<T>(_ body: ([RawRow]) throws -> T) throws -> T
    /// 3. Reads the rows with these keys, one point lookup each.
    func lookup(_ keys: [Int64]) throws -> Checksum
    /// 4. For each window, the rows with `amount` in it (through the index), by date descending
    ///    then key.
    func predicate(_ windows: [Range<Int64>]) throws -> Checksum
    /// 5. For each account in key order, its rows in key order (through the account index).
    func toMany() throws -> Checksum
    /// Workload 9's baseline: copies every row into the new layout (`memo` renamed `note`, a
    /// `flag` column filled with `flag`) in one transaction; returns the rows copied.
    func migrateRows(flag: Int64) throws -> Int
    /// Closes the store. Idempotent.
    func close()
}

/// One row as a raw baseline reads it.
struct RawRow {
    var id: Int64
    var amount: Int64
    var memo: String
    var date: Double
    var account: Int64
}

extension Checksum {
    /// Folds in every attribute of rows read by a raw baseline (workload 2).
    mutating func add(_ rows: [RawRow]) {
        for row in rows { add(amount: row.amount, memo: row.memo, date: row.date) }
    }

    /// Folds in the amounts of rows read by a raw baseline (workloads 3–5); the rest of each
    /// row, decoded all the same, goes to ``unread``.
    mutating func addAmounts(_ rows: [RawRow]) {
        for row in rows { addAmount(row) }
    }

    @inline(__always)
    mutating func addAmount(_ row: RawRow) {
        add(amount: row.amount)
        unread &+= row.memo.utf8.count &+ Int(row.date) &+ Int(row.account)
    }
}
