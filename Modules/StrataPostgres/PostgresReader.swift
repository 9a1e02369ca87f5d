import Foundation
import StrataStorage

/// A read snapshot on one leased connection: a `REPEATABLE READ READ ONLY` transaction whose
/// snapshot is fixed by its first statement, the schema-version check made in `init`.
///
/// Used by one thread at a time; ``close()`` rolls back and returns the connection.
final class PostgresReader: StoreReader {
    let engine: PostgresEngine
    private var session: PostgresSession?
    /// False inside a transaction someone else holds (a migration's): `close` then leaves the
    /// transaction and the connection alone, and the reader closes with its engine's pool.
    private let ownsTransaction: Bool
    /// The rows one `FETCH` of a streamed read brings: a large read holds this many at a time.
    static let streamBatch = 2_000
    /// Whether this reader's cursor was read to its end and is still open: it is closed in the
    /// next streamed read's round trip, or by the transaction's end, not by a round trip of its own.
    private var exhaustedCursorOpen = false

    init(engine: PostgresEngine, connection: PGConnection) throws(StrataError) {
        self.engine = engine
        ownsTransaction = true
        let session = PostgresSession(connection: connection, pool: engine.pool)
        // One round trip: the snapshot is taken by the SELECT, inside makeReader (the contract).
        let sql =
            "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; "
            + engine.names.versionAndIdentity
        do throws(StrataError) {
            let result: PGResult
            do {
                result = try connection.executeScript(sql, deadline: engine.pool.statementDeadline)
            } catch {
                throw session.error(error, sql: sql)
            }
            try engine.checkSchemaVersion(result)
        } catch {
            session.rollbackQuietly()
            throw error
        }
        self.session = session
    }

    /// A reader inside the transaction open on `session` (a migration's): no `BEGIN`, no version
    /// check; it sees the transaction's writes so far.
    init(insideTransactionOf engine: PostgresEngine, session: PostgresSession) {
        self.engine = engine
        self.session = session
        ownsTransaction = false
    }

    deinit { close() }

    func open() throws(StrataError) -> PostgresSession {
        guard let session, ownsTransaction || !engine.pool.isClosed else {
            throw .misuse("this store reader was closed; make a new one")
        }
        return session
    }

    func row(entity: Int, key: Int64) throws -> StoredRow? {
        let session = try open()
        let table = try engine.table(entity)
        let result = try session.run(table.selectByKey, [.int8(key)])
        guard result.rowCount > 0 else { return nil }
        var row = StoredRow(key: 0, version: 0, values: [])
        try PostgresRowDecoder(result: result, table: table, store: engine.location).decode(0, into: &row)
        return row
    }

    func rows(for plan: FetchPlan) throws -> [StoredRow] {
        var result: [StoredRow] = []
        try forEachRow(for: plan) { result.append($0) }
        return result
    }

    func forEachRow(for plan: FetchPlan, _ body: (StoredRow) throws -> Void) throws {
        let session = try open()
        let table = try engine.table(plan.entity)
        for key in plan.sort where !table.entity.columns.indices.contains(key.column) {
            throw StrataError.misuse(
                "sort names column \(key.column), but \(table.entity.name) has \(table.entity.columns.count) columns")
        }
        var sql = "SELECT \(table.selectList) FROM \(table.table)"
        var parameters: [PGParameter] = []
        var exact = true
        if let filter = plan.filter {
            let translated = try PostgresFilterSQL(filter, entity: table.entity)
            sql += " WHERE " + translated.sql
            parameters = translated.parameters
            exact = translated.isExact
        }
        if !exact {
            // The SQL selects a superset: filter, sort and window in Swift, with the reference semantics.
            let result = try session.run(sql, parameters)
            let decoder = try PostgresRowDecoder(result: result, table: table, store: engine.location)
            var rows: [StoredRow] = []
            for index in 0..<result.rowCount {
                var row = StoredRow(key: 0, version: 0, values: [])
                try decoder.decode(index, into: &row)
                rows.append(row)
            }
            for row in plan.apply(to: rows) { try body(row) }
            return
        }
        if !plan.allowsAnyOrder {
            var order: [String] = []
            for key in plan.sort {
                let name = pgQuoted(table.entity.columns[key.column].name)
                order.append(key.ascending ? "\(name) ASC NULLS FIRST" : "\(name) DESC NULLS LAST")
            }
            order.append("\"id\" ASC")
            sql += " ORDER BY " + order.joined(separator: ", ")
        }
        if plan.limit != nil || plan.offset > 0 {
            parameters.append(plan.limit.map { .int8(Int64(max($0, 0))) } ?? .null(oid: PGParameter.int8OID))
            sql += " LIMIT $\(parameters.count)"
            parameters.append(.int8(Int64(max(plan.offset, 0))))
            sql += " OFFSET $\(parameters.count)"
        }
        // A small window comes in one result; anything larger through a cursor, in batches. A
        // cursor needs a transaction: a reader inside another's runs in autocommit when a commit's
        // guards are re-read after its rollback (``PostgresEngine/rereadConflicts(_:session:)``).
        let inTransaction = session.connection.transactionState == .inTransaction
        if !inTransaction || plan.limit.map({ $0 <= Self.streamBatch }) == true {
            let result = try session.run(sql, parameters)
            let decoder = try PostgresRowDecoder(result: result, table: table, store: engine.location)
            var row = StoredRow(key: 0, version: 0, values: [])
            for index in 0..<result.rowCount {
                try decoder.decode(index, into: &row)
                try body(row)
            }
            return
        }
        try stream(sql, parameters, table: table, session: session, body)
    }

    /// Runs `sql` through a cursor of the reader's transaction, ``streamBatch`` rows per `FETCH`,
    /// so a read of a million rows holds one batch at a time instead of the whole result.
    ///
    /// The cursor's `DECLARE` and first `FETCH` go in one round trip (a pipeline), so a read of
    /// fewer than ``streamBatch`` rows takes one, as a plain query does. A cursor read to its end is left
    /// open when the reader owns its transaction, and closed in the next streamed read's round trip
    /// (the transaction's end closes it otherwise); in someone else's transaction, or when the
    /// read stops early (`body` throwing included), it is closed at once, so the reader stays
    /// usable. `body` does not call the reader (the contract of ``forEachRow(for:_:)``).
    private func stream(
        _ sql: String, _ parameters: [PGParameter], table: PostgresTableLayout, session: PostgresSession,
        _ body: (StoredRow) throws -> Void
    ) throws {
        let batch = Self.streamBatch
        let fetch = "FETCH \(batch) FROM strata_rows"
        var statements: [PGConnection.PipelinedStatement] = []
        if exhaustedCursorOpen { statements.append(.init(sql: "CLOSE strata_rows")) }
        statements.append(.init(sql: "DECLARE strata_rows NO SCROLL CURSOR FOR \(sql)", parameters: parameters))
        statements.append(.init(sql: fetch))
        exhaustedCursorOpen = false
        var row = StoredRow(key: 0, version: 0, values: [])
        // Hands a batch's rows to `body`; whether the cursor may have more. The batch is freed
        // when this returns, before the next `FETCH`: one batch held at a time.
        func deliver(_ result: PGResult) throws -> Bool {
            let decoder = try PostgresRowDecoder(result: result, table: table, store: engine.location)
            for index in 0..<result.rowCount {
                try decoder.decode(index, into: &row)
                try body(row)
            }
            return result.rowCount == batch
        }
        // A failed pipeline leaves no cursor to close: its transaction is aborted, or its
        // connection lost.
        var first: PGResult? = try session.runPipeline(statements, main: statements.count - 2)[statements.count - 1]
        var readToEnd = false
        defer {
            if !readToEnd || !ownsTransaction {
                // Fails only when the transaction already has (its error is the one thrown).
                _ = try? session.runRaw("CLOSE strata_rows")
            }
        }
        var more = false
        if let result = first { more = try deliver(result) }
        first = nil
        while more { more = try deliver(session.run(fetch)) }
        readToEnd = true
        exhaustedCursorOpen = ownsTransaction
    }

    func count(entity: Int, filter: Filter?) throws -> Int {
        let session = try open()
        let table = try engine.table(entity)
        guard let filter else {
            return Int(try session.int64("SELECT count(*) FROM \(table.table)") ?? 0)
        }
        let translated = try PostgresFilterSQL(filter, entity: table.entity)
        if !translated.isExact {
            return try rows(for: FetchPlan(entity: entity, filter: filter)).count
        }
        return Int(
            try session.int64("SELECT count(*) FROM \(table.table) WHERE \(translated.sql)", translated.parameters) ?? 0
        )
    }

    func linkedKeys(join: Int, from side: JoinSide, key: Int64) throws -> [Int64] {
        let session = try open()
        let layout = try engine.join(join)
        let result = try session.run(side == .left ? layout.rightsOfLeft : layout.leftsOfRight, [.int8(key)])
        var keys: [Int64] = []
        keys.reserveCapacity(result.rowCount)
        for row in 0..<result.rowCount {
            guard let linked = result.int64(row, 0) else { throw corruptJoin(layout) }
            keys.append(linked)
        }
        return keys
    }

    func forEachLink(join: Int, from side: JoinSide, keys: [Int64], _ body: (Int64, Int64) throws -> Void) throws {
        let session = try open()
        let layout = try engine.join(join)
        guard !keys.isEmpty else { return }
        let result = try session.run(side == .left ? layout.linksOfLefts : layout.linksOfRights, [.int8Array(keys)])
        for row in 0..<result.rowCount {
            guard let key = result.int64(row, 0), let linked = result.int64(row, 1) else { throw corruptJoin(layout) }
            try body(key, linked)
        }
    }

    private func corruptJoin(_ layout: PostgresJoinLayout) -> StrataError {
        .storeCorrupt("\(engine.location): join table \(layout.join.name) holds a value that is not an int8 key")
    }

    func close() {
        guard let session else { return }
        self.session = nil
        guard ownsTransaction else { return }
        session.rollbackQuietly()
        engine.pool.checkIn(session.connection, .reader)
    }
}

/// Decodes the rows of one result laid out as `id, version, columns…` of a table, checking the
/// column types once.
struct PostgresRowDecoder {
    let result: PGResult
    let table: PostgresTableLayout
    let store: String

    /// - Throws: `.storeCorrupt` when the result's columns are not the layout's (altered by hand).
    init(result: PGResult, table: PostgresTableLayout, store: String) throws(StrataError) {
        self.result = result
        self.table = table
        self.store = store
        guard result.columnCount == table.decoding.count + 2 else {
            throw .storeCorrupt(
                """
                \(store): table \(table.entity.name) has \(result.columnCount - 2) columns where the model has \
                \(table.decoding.count)
                """
            )
        }
        guard
            result.rowCount == 0
                || (result.type(ofColumn: 0) == PGParameter.int8OID && result.type(ofColumn: 1) == PGParameter.int8OID)
        else {
            throw .storeCorrupt("\(store): the id or version column of \(table.entity.name) is not int8")
        }
        for (column, decoding) in table.decoding.enumerated()
        where result.type(ofColumn: column + 2) != PostgresTableLayout.typeOID(decoding.storageClass) {
            throw .storeCorrupt(
                """
                \(store): column \(table.entity.columns[column].name) of \(table.entity.name) has type OID \
                \(result.type(ofColumn: column + 2)), not \(PostgresTableLayout.sqlType(decoding.storageClass)); it \
                was altered outside Strata
                """
            )
        }
    }

    /// Decodes row `index` over `row`'s storage: its values array is written in place when
    /// `row` holds the only reference to one of the right length (a loop that decodes row after
    /// row into one `StoredRow` allocates no array per row).
    func decode(_ index: Int, into row: inout StoredRow) throws(StrataError) {
        guard let key = result.int64(index, 0), let version = result.int64(index, 1) else {
            throw .storeCorrupt("\(store): a row of \(table.entity.name) has a NULL id or version")
        }
        row.key = key
        row.version = version
        let decoding = table.decoding
        // Taken out of `row`, so that the array is uniquely referenced while it is written.
        var values = row.values
        row.values = []
        if values.count != decoding.count { values = ContiguousArray(repeating: .null, count: decoding.count) }
        for column in decoding.indices {
            let column2 = column + 2
            let place = decoding[column]
            // Each accessor answers nil for NULL as for a value of the wrong form: NULL is told
            // apart only then, so that a value costs at most one NULL check (a non-empty text or
            // blob none). A value goes straight into its slot (no optional `StoredValue` in
            // between, which cost a copy and a destroy).
            switch place.storageClass {
            case .integer:
                if let v = result.int64(index, column2) {
                    if place.isBool && v != 0 && v != 1 {
                        throw .storeCorrupt(
                            """
                            \(store): \(table.entity.name).\(table.entity.columns[column].name) of row \(key) holds \
                            \(v), but a Bool column holds only 0 or 1
                            """
                        )
                    }
                    values[column] = .integer(v)
                    continue
                }
            case .real:
                if let v = result.double(index, column2), !v.isNaN {
                    values[column] = .real(v)
                    continue
                }
            case .text:
                if let v = result.text(index, column2) {
                    values[column] = .text(v)
                    continue
                }
            case .blob:
                if let v = result.data(index, column2) {
                    values[column] = .blob(v)
                    continue
                }
            }
            guard result.isNull(index, column2) else { throw Self.bad(store, table, column, key) }
            guard place.isOptional else {
                throw .storeCorrupt(
                    """
                    \(store): \(table.entity.name).\(table.entity.columns[column].name) of row \(key) is \
                    NULL in a required column
                    """
                )
            }
            values[column] = .null
        }
        row.values = values
    }

    private static func bad(_ store: String, _ table: PostgresTableLayout, _ column: Int, _ key: Int64) -> StrataError {
        .storeCorrupt(
            """
            \(store): \(table.entity.name).\(table.entity.columns[column].name) of row \(key) does not decode as its \
            type
            """
        )
    }
}
