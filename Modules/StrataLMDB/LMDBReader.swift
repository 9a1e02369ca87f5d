import Foundation
import StrataStorage

/// A read snapshot: one `MDB_RDONLY` transaction (the environment uses `MDB_NOTLS`, so the
/// reader may move between threads, one at a time); or, for a migration's custom stage, a view
/// of the opening write transaction (``LMDBTransactionEngine``), which sees that transaction's
/// writes so far.
///
/// Every snapshot call runs inside ``LMDBEnvironment/withReadOperation(_:)`` and copies what it
/// reads out of the map before returning.
final class LMDBReader: StoreReader {
    /// The environment of the reader's own snapshot; nil for a reader over a migration's write
    /// transaction. (Separate stored properties, not an enum with payloads: a lookup reads them
    /// without copying the references out of a case.)
    private let environment: LMDBEnvironment?
    /// The reader's own read snapshot, until it closes.
    private var snapshot: LMDBTransaction?
    /// The migration's transaction engine whose write transaction the reader uses (checked open
    /// at every call), until the reader closes.
    private var lender: LMDBTransactionEngine?
    private let catalog: LMDBCatalog
    private let path: String
    /// The row that ``row(entity:key:)`` decodes into and returns: a caller that copies the
    /// values out leaves its storage to the next lookup. Used by one thread at a time.
    private let lookupRow = ReusedRow()

    /// Begins the snapshot. The caller has already counted this reader as a user of the
    /// environment (``LMDBEngine/makeReader()``); the reader gives that use back when it closes,
    /// or at once when beginning fails.
    init(engine: LMDBEngine) throws(StrataError) {
        catalog = engine.catalog
        let environment = engine.environment
        self.environment = environment
        path = environment.path
        let txn: LMDBTransaction
        do {
            txn = try environment.beginRead()
        } catch {
            LMDBRegistry.release(environment)
            throw error
        }
        snapshot = txn
        // An engine still open with an older version must not decode rows a migration rewrote.
        do {
            let catalog = catalog
            try environment.withReadOperation { try catalog.checkSchemaVersion(txn, engine.schemaVersion) }
        } catch {
            close()
            throw strataError(error, "reading \(path)")
        }
    }

    /// A reader over a migration's write transaction, laid out as the transaction engine's schema.
    init(transactionEngine: LMDBTransactionEngine) {
        catalog = transactionEngine.catalog
        path = transactionEngine.path
        environment = nil
        lender = transactionEngine
    }

    deinit {
        close()
    }

    func close() {
        lender = nil
        guard let environment, let txn = snapshot else { return }
        snapshot = nil
        environment.endRead(txn)
        LMDBRegistry.release(environment)
    }

    /// Runs `body` on the open transaction (inside a read operation for a snapshot).
    func reading<T>(_ body: (LMDBTransaction) throws -> T) throws -> T {
        do {
            if let environment {
                guard let txn = snapshot else { throw StrataError.misuse("the reader was closed") }
                return try environment.withReadOperation { try body(txn) }
            }
            guard let lender else { throw StrataError.misuse("the reader was closed") }
            return try body(try lender.transaction())
        } catch {
            throw strataError(error, "reading \(path)")
        }
    }

    func entity(_ number: Int) throws(StrataError) -> LMDBCatalog.Entity {
        guard catalog.entities.indices.contains(number) else {
            throw .misuse("no entity number \(number) in this store's schema")
        }
        return catalog.entities[number]
    }

    func row(entity number: Int, key: Int64) throws -> StoredRow? {
        let entity = try entity(number)
        guard key > 0 else { return nil }
        let found: StoredRow? = try reading { txn in
            try txn.get(entity.dbi, primaryKey: key) { try lookupRow.decode($0, key: key, layout: entity.layout) }
        }
        return found
    }

    func rows(for plan: FetchPlan) throws -> [StoredRow] {
        var matches: [StoredRow] = []
        // Without a sort, the rows stream in primary-key order, their window counted off as they
        // come (``forEachRow(for:_:)``).
        guard !plan.sort.isEmpty else {
            try forEachRow(for: plan) { matches.append($0) }
            return matches
        }
        let entity = try entity(plan.entity)
        try Self.checkColumns(of: plan, in: entity)
        try reading { txn in
            try Self.forEachMatch(txn, entity, plan.filter, anyOrder: plan.allowsAnyOrder) { row in
                matches.append(row)
                return true
            }
        }
        plan.sortRows(&matches)
        let window = Window(plan)
        if window.offset == 0 && window.end == nil { return matches }
        return Array(window.apply(to: matches))
    }

    /// A plan's offset and limit as non-negative numbers, with saturating arithmetic: any
    /// offset and limit a caller passes (negative, `Int.max`) selects rows without trapping.
    struct Window {
        /// Rows to skip: the plan's offset, 0 when negative.
        var offset: Int
        /// One past the last row to return (offset + limit, saturating at `Int.max`), or nil
        /// without a limit.
        var end: Int?

        init(_ plan: FetchPlan) {
            offset = max(plan.offset, 0)
            end = plan.limit.map { limit in
                let (sum, overflow) = offset.addingReportingOverflow(max(limit, 0))
                return overflow ? .max : sum
            }
        }

        /// The rows of the window among `rows`.
        func apply(to rows: [StoredRow]) -> ArraySlice<StoredRow> {
            let start = min(offset, rows.count)
            let stop = min(end ?? rows.count, rows.count)
            return rows[start..<max(start, stop)]
        }
    }

    func forEachRow(for plan: FetchPlan, _ body: (StoredRow) throws -> Void) throws {
        // Sorted plans need every row first; the rest stream in primary-key order, a window's
        // rows counted off as they come (a batched read's pages among them).
        guard plan.sort.isEmpty else {
            for row in try rows(for: plan) { try body(row) }
            return
        }
        let entity = try entity(plan.entity)
        try Self.checkColumns(of: plan, in: entity)
        let window = Window(plan)
        // How many rows the window passes on after its offset (the end is never below the offset).
        let limit = window.end.map { $0 - window.offset }
        if limit == 0 { return }
        let filter = plan.filter
        // (A window keeps primary-key order: `allowsAnyOrder` is false for one.)
        let anyOrder = plan.allowsAnyOrder
        var skipped = 0
        var passed = 0
        // The body's own error stops the scan and reaches the caller as it was thrown, not
        // wrapped as an engine read failure.
        var bodyError: (any Error)?
        try reading { txn in
            try Self.forEachMatch(txn, entity, filter, anyOrder: anyOrder) { row in
                if skipped < window.offset {
                    skipped += 1
                    return true
                }
                do {
                    try body(row)
                } catch {
                    bodyError = error
                    return false
                }
                passed += 1
                if let limit, passed >= limit { return false }
                return true
            }
        }
        if let bodyError { throw bodyError }
    }

    /// The entity's entry count (one `mdb_stat`) for a plan without a filter, trimmed by its
    /// offset and limit; nil when a filter makes the number unknown.
    func expectedRowCount(for plan: FetchPlan) -> Int? {
        guard plan.filter == nil, let entity = try? entity(plan.entity),
            let total = try? reading({ txn in try txn.count(entity.dbi) })
        else { return nil }
        let window = Window(plan)
        // Both are non-negative, so neither subtraction can overflow.
        let afterOffset = max(total - window.offset, 0)
        guard let end = window.end else { return afterOffset }
        return min(afterOffset, end - window.offset)
    }

    func count(entity number: Int, filter: Filter?) throws -> Int {
        let entity = try entity(number)
        if let filter { try Self.checkColumns(of: filter, count: entity.layout.classes.count, entity: entity.name) }
        return try reading { txn in
            guard let filter else { return try txn.count(entity.dbi) }
            var count = 0
            // A count needs no order.
            try Self.forEachMatch(txn, entity, filter, anyOrder: true) { _ in
                count += 1
                return true
            }
            return count
        }
    }

    func linkedKeys(join number: Int, from side: JoinSide, key: Int64) throws -> [Int64] {
        guard catalog.joins.indices.contains(number) else {
            throw StrataError.misuse("no join number \(number) in this store's schema")
        }
        let join = catalog.joins[number]
        return try reading { txn in
            try LMDBCommitter.linkedKeys(txn, side == .left ? join.left : join.right, key)
        }
    }

    /// One cursor pass over the join direction's database: a range of entries per key, keys
    /// ascending (a caller's unsorted or repeated keys are sorted and made distinct first).
    func forEachLink(
        join number: Int, from side: JoinSide, keys: [Int64], _ body: (Int64, Int64) throws -> Void
    ) throws {
        guard catalog.joins.indices.contains(number) else {
            throw StrataError.misuse("no join number \(number) in this store's schema")
        }
        let join = catalog.joins[number]
        let dbi = side == .left ? join.left : join.right
        var ordered = keys
        if zip(keys, keys.dropFirst()).contains(where: { $0 >= $1 }) {
            ordered = Array(Set(keys)).sorted()
        }
        let ranges = ordered.map { key in
            let prefix = IndexKeyCodec.primaryKey(key)
            return LMDBFilterPlanner.KeyRange(start: prefix, end: IndexKeyCodec.successor(ofPrefix: prefix))
        }
        // The body's own error stops the pass and reaches the caller as it was thrown.
        var bodyError: (any Error)?
        try reading { txn in
            try txn.scan(dbi, ranges: ranges) { pair, _ in
                guard let key = IndexKeyCodec.readPrimaryKey(pair),
                    let other = IndexKeyCodec.readPrimaryKey(pair, at: 8)
                else { return true }
                do {
                    try body(key, other)
                } catch {
                    bodyError = error
                    return false
                }
                return true
            }
        }
        if let bodyError { throw bodyError }
    }

    /// Calls `body` with every row matching `filter` in primary-key order until it returns false.
    /// Reads only `txn`: a commit checks its result guards with it too (``LMDBCommitter``).
    /// - Parameters:
    ///   - anyOrder: the rows may come in any order (``FetchPlan/allowsAnyOrder``).
    ///   - wanted: the columns `body` reads, one flag per column (they must include the filter's);
    ///     texts and blobs of the others read as `.null` (``RowCodec``). Nil for every column.
    ///   - planned: the plan of `filter` when the caller made it already, in `txn` (its index race
    ///     is not run twice); nil to make it here.
    static func forEachMatch(
        _ txn: LMDBTransaction, _ entity: LMDBCatalog.Entity, _ filter: Filter?, anyOrder: Bool = false,
        wanted: ContiguousArray<Bool>? = nil, planned: LMDBFilterPlanner.Plan? = nil,
        _ body: (StoredRow) throws -> Bool
    ) throws {
        let plan = try planned ?? LMDBFilterPlanner(entity: entity).plan(filter, in: txn)
        // An exact index scan finds only matches (a fault's `fk == key`, a batch's `fk IN keys`):
        // nothing to check again. Otherwise prepared once per scan: membership constants are
        // hashed instead of compared one by one.
        guard !plan.isExact, let filter else {
            try forEachCandidate(txn, entity, plan, anyOrder: anyOrder, wanted: wanted, body)
            return
        }
        // A null test (a batch fault's `fk IS NOT NULL` over the whole entity) is one look at
        // the decoded value, not an evaluator per row. The callers checked the column exists.
        switch filter {
        case .isNull(let column), .isNotNull(let column):
            let wantsNull = if case .isNull = filter { true } else { false }
            try forEachCandidate(txn, entity, plan, anyOrder: anyOrder, wanted: wanted) { row in
                if row.values[column].isNull != wantsNull { return true }
                return try body(row)
            }
            return
        default:
            break
        }
        let evaluator = FilterEvaluator(filter)
        try forEachCandidate(txn, entity, plan, anyOrder: anyOrder, wanted: wanted) { row in
            if !evaluator.matches(row.values, key: row.key) { return true }
            return try body(row)
        }
    }

    /// Calls `body` with every candidate row of `plan` in primary-key order (with `anyOrder`, in
    /// index order where that saves sorting) until it returns false.
    private static func forEachCandidate(
        _ txn: LMDBTransaction, _ entity: LMDBCatalog.Entity, _ plan: LMDBFilterPlanner.Plan, anyOrder: Bool,
        wanted: ContiguousArray<Bool>?, _ body: (StoredRow) throws -> Bool
    ) throws {
        // One row for the whole read: its values' storage is reused for every row that the
        // consumer did not keep.
        var row = StoredRow(key: 0, version: 0, values: [])
        switch plan {
        case .nothing:
            return
        case .scan(let lower, let upper):
            let end = upper == .max ? nil : IndexKeyCodec.primaryKey(upper + 1)
            try txn.scan(entity.dbi, from: IndexKeyCodec.primaryKey(max(lower, 1)), before: end) { keyBytes, value in
                let key = try IndexKeyCodec.rowKey(keyBytes, entity: entity.name)
                try RowCodec.decode(value, key: key, layout: entity.layout, wanted: wanted, into: &row)
                return try body(row)
            }
        case .indexes(let scans) where scans.count == 1 && (anyOrder || scans[0].isInKeyOrder):
            // One value of a single-column index: its entries are in primary-key order already,
            // so each row is read as its entry is met, with no list of keys to sort. Without an
            // order to keep, the same holds for any one scan (it never meets a row twice).
            let scan = scans[0]
            try txn.scan(scan.index.dbi, ranges: scan.ranges) { _, value in
                let key = try Self.indexedKey(value, scan.index)
                try Self.read(txn, entity, key, wanted: wanted, into: &row)
                return try body(row)
            }
        case .indexes(let scans):
            var keys: [Int64] = []
            for scan in scans {
                try txn.scan(scan.index.dbi, ranges: scan.ranges) { _, value in
                    keys.append(try Self.indexedKey(value, scan.index))
                    return true
                }
            }
            keys.sort()
            var previous: Int64?
            for key in keys where key != previous {
                previous = key
                try Self.read(txn, entity, key, wanted: wanted, into: &row)
                if try !body(row) { return }
            }
        }
    }

    /// The primary key an index entry's value holds.
    /// - Throws: `.storeCorrupt` for a value that is not 8 bytes.
    @inline(__always)
    private static func indexedKey(_ value: RawSpan, _ index: LMDBCatalog.Index) throws(StrataError) -> Int64 {
        guard value.byteCount == 8, let key = IndexKeyCodec.readPrimaryKey(value) else {
            throw .storeCorrupt("index \(index.name) holds a malformed entry")
        }
        return key
    }

    /// Decodes the row `key` that an index entry points at into `row`.
    /// - Throws: `.storeCorrupt` when the row does not exist or does not decode.
    @inline(__always)
    private static func read(
        _ txn: LMDBTransaction, _ entity: LMDBCatalog.Entity, _ key: Int64, wanted: ContiguousArray<Bool>?,
        into row: inout StoredRow
    ) throws {
        let found: Void? = try txn.get(entity.dbi, primaryKey: key) {
            try RowCodec.decode($0, key: key, layout: entity.layout, wanted: wanted, into: &row)
        }
        guard found != nil else {
            throw StrataError.storeCorrupt("index \(entity.name) points at row \(key), which does not exist")
        }
    }
}
