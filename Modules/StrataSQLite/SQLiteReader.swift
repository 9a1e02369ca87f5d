import StrataStorage

/// A read snapshot on one pooled connection: a deferred transaction pinned at creation.
///
/// Used by one thread at a time; ``close()`` ends the transaction and returns the connection.
/// A migration's reader (``init(insideTransactionOf:connection:)``) instead reads inside the
/// write transaction open on the writer connection, seeing its writes so far; it neither
/// begins nor ends a transaction.
final class SQLiteReader: StoreReader {
    /// The layouts that entity and join numbers refer to.
    let engine: any SQLiteLayoutSource
    /// The engine whose pool the connection returns to; nil for a reader inside a write transaction.
    private let pool: SQLiteEngine?
    private var connection: SQLiteConnection?
    /// The row that ``row(entity:key:)`` decodes into and returns: a caller that copies the
    /// values out leaves its storage to the next lookup. Used by one thread at a time.
    private let lookupRow = SQLiteReusedRow()

    /// Begins the snapshot: `BEGIN` plus one read, because WAL fixes a snapshot at the first read.
    /// That read is the store's schema version: an engine still open with an older version gets
    /// `.storeNewerThanModel` instead of reading rows that a migration changed.
    init(engine: SQLiteEngine, connection: SQLiteConnection) throws(StrataError) {
        self.engine = engine
        pool = engine
        try connection.run(cached: "BEGIN")
        do throws(StrataError) {
            try engine.checkSchemaVersion(connection)
        } catch {
            connection.rollbackQuietly()
            throw error
        }
        self.connection = connection
    }

    /// A reader inside the write transaction open on `connection`, laid out by `source`.
    init(insideTransactionOf source: some SQLiteLayoutSource, connection: SQLiteConnection) {
        engine = source
        pool = nil
        self.connection = connection
    }

    deinit { close() }

    func open() throws(StrataError) -> SQLiteConnection {
        guard let connection else { throw .misuse("this store reader was closed; make a new one") }
        return connection
    }

    func row(entity: Int, key: Int64) throws -> StoredRow? {
        let connection = try open()
        let table = try engine.table(entity)
        let statement = try connection.statement(
            table.selectByKey, slot: table.slotBase + SQLiteStatementSlot.selectByKey)
        defer { statement.rewind() }
        try statement.bind(key, at: 1)
        guard try statement.step() else { return nil }
        return try lookupRow.decode(statement, table)
    }

    func rows(for plan: FetchPlan) throws -> [StoredRow] {
        var result: [StoredRow] = []
        if let limit = plan.limit { result.reserveCapacity(min(max(limit, 0), 4096)) }
        try forEachRow(for: plan) { result.append($0) }
        return result
    }

    func forEachRow(for plan: FetchPlan, _ body: (StoredRow) throws -> Void) throws {
        let connection = try open()
        let table = try engine.table(plan.entity)
        if let shape = SQLiteQueryShape(plan, table: table) {
            // A fault or a batch read: the shape's statement is prepared once per connection.
            let statement = try connection.statement(shape: shape.key) { () throws(StrataError) in
                try shape.sql(for: plan, table: table, variableLimit: connection.variableLimit)
            }
            defer { statement.reset() }
            try shape.bind(to: statement)
            try Self.stream(statement, table, body)
            return
        }
        let query = try SQLiteQuery.select(plan, table: table, variableLimit: connection.variableLimit)
        try run(query, on: connection) { (statement) throws in try Self.stream(statement, table, body) }
    }

    /// Steps `statement` to its end, handing each row to `body`.
    private static func stream(
        _ statement: SQLiteStatement, _ table: SQLiteTableLayout, _ body: (StoredRow) throws -> Void
    ) throws {
        // One row for the whole query: its values' storage is reused for every row that the
        // consumer did not keep.
        var row = StoredRow(key: 0, version: 0, values: [])
        while try statement.step() {
            try statement.decodeRow(table, into: &row)
            try body(row)
        }
    }

    /// For a plan without a filter: the entity's largest primary key, trimmed by the plan's
    /// offset and limit, from one descent of the table's b-tree. Keys are allocated ascending from
    /// 1 with gaps only where rows were deleted or reserved keys went unused, so it bounds the row
    /// count from above; nil when a filter makes the number unknown.
    func expectedRowCount(for plan: FetchPlan) -> Int? {
        guard plan.filter == nil, let connection, let table = try? engine.table(plan.entity),
            let statement = try? connection.statement("SELECT max(\"id\") FROM \(table.table)")
        else { return nil }
        defer { statement.reset() }
        guard (try? statement.step()) == true else { return nil }
        let total = Int(max(statement.int64(at: 0), 0))
        let offset = max(plan.offset, 0)
        let afterOffset = max(total - offset, 0)
        guard let limit = plan.limit else { return afterOffset }
        return min(afterOffset, max(limit, 0))
    }

    func count(entity: Int, filter: Filter?) throws -> Int {
        let connection = try open()
        let table = try engine.table(entity)
        let query = try SQLiteQuery.count(table, filter: filter, variableLimit: connection.variableLimit)
        return try run(query, on: connection) { (statement) throws(StrataError) in
            guard try statement.step() else { return 0 }
            return Int(statement.int64(at: 0))
        }
    }

    /// SQLite's plan for the query of `plan` (the `detail` column of `EXPLAIN QUERY PLAN`, one
    /// line per step), run in this reader's snapshot. For tests that check index use.
    /// - Throws: `.misuse` after ``close()``, and what the query itself would throw.
    func queryPlan(for plan: FetchPlan) throws -> [String] {
        let connection = try open()
        let table = try engine.table(plan.entity)
        var query = try SQLiteQuery.select(plan, table: table, variableLimit: connection.variableLimit)
        if let shape = SQLiteQueryShape(plan, table: table) {
            // The statement forEachRow(for:) runs, with the shape's one parameter.
            query.sql = try shape.sql(for: plan, table: table, variableLimit: connection.variableLimit)
            query.membershipLists = []
            if case .isIn(_, let values)? = plan.filter {
                query.parameters = [.text(SQLiteQueryShape.jsonArray(values))]
            }
        }
        query.sql = "EXPLAIN QUERY PLAN " + query.sql
        return try run(query, on: connection) { (statement) throws(StrataError) in
            var details: [String] = []
            while try statement.step() { details.append(statement.text(at: 3) ?? "") }
            return details
        }
    }

    /// Prepares `query`, loads its membership lists, binds it and hands the statement to `body`;
    /// resets the statement and empties the lists afterwards, also when `body` throws.
    func run<T>(
        _ query: SQLiteQuery, on connection: SQLiteConnection, _ body: (SQLiteStatement) throws -> T
    ) throws -> T {
        // The lists first: the statement reads their table, which must exist when it is prepared.
        defer { if !query.membershipLists.isEmpty { connection.clearMembershipLists() } }
        try connection.loadMembershipLists(query.membershipLists)
        let statement = try connection.statement(query.sql)
        defer { statement.reset() }
        try bind(query.parameters, to: statement)
        return try body(statement)
    }

    func linkedKeys(join: Int, from side: JoinSide, key: Int64) throws -> [Int64] {
        let connection = try open()
        let layout = try engine.join(join)
        let statement =
            try side == .left
            ? connection.statement(layout.rightsOfLeft, slot: layout.slotBase + SQLiteStatementSlot.rightsOfLeft)
            : connection.statement(layout.leftsOfRight, slot: layout.slotBase + SQLiteStatementSlot.leftsOfRight)
        defer { statement.reset() }
        try statement.bind(key, at: 1)
        var keys: [Int64] = []
        while try statement.step() { keys.append(statement.int64(at: 0)) }
        return keys
    }

    /// One statement for all keys: they are bound as one JSON array (see ``SQLiteQueryShape``).
    func forEachLink(
        join: Int, from side: JoinSide, keys: [Int64], _ body: (Int64, Int64) throws -> Void
    ) throws {
        let connection = try open()
        let layout = try engine.join(join)
        guard !keys.isEmpty else { return }
        let statement =
            try side == .left
            ? connection.statement(layout.linksOfLefts, slot: layout.slotBase + SQLiteStatementSlot.linksOfLefts)
            : connection.statement(layout.linksOfRights, slot: layout.slotBase + SQLiteStatementSlot.linksOfRights)
        defer { statement.reset() }
        try statement.bind(.text(SQLiteQueryShape.jsonArray(integers: keys)), at: 1)
        while try statement.step() { try body(statement.int64(at: 0), statement.int64(at: 1)) }
    }

    func close() {
        guard let connection else { return }
        self.connection = nil
        guard let pool else { return } // The write transaction is its owner's to end.
        if connection.inTransaction {
            do {
                try connection.run(cached: "ROLLBACK")
            } catch {
                connection.rollbackQuietly()
            }
        }
        pool.checkIn(connection)
    }

    private func bind(_ parameters: [StoredValue], to statement: SQLiteStatement) throws(StrataError) {
        var index: Int32 = 1
        for value in parameters {
            try statement.bind(value, at: index)
            index += 1
        }
    }
}
