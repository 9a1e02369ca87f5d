import CSQLite
import Foundation

/// The raw SQLite baseline: `sqlite3_*` calls, prepared statements, one transaction per
/// workload, WAL mode and `synchronous = FULL` like the engine's defaults, no extra checks.
final class RawSQLite: RawBaseline {
    private var db: OpaquePointer?
    /// Rows inserted by ``insertRows(_:)``: fetch-all reserves its array for them up front, so
    /// the raw figure does not include the array's regrowth (a 1M-row array is `mmap`ped and
    /// faulted in again at every doubling).
    private var rowCount = 0

    static let columns = "id, amount, memo, date, account"
    static let selectAll = "SELECT \(columns) FROM row ORDER BY id"
    static let selectByKey = "SELECT \(columns) FROM row WHERE id = ?1"
    static let selectWindow = "SELECT \(columns) FROM row WHERE amount >= ?1 AND amount < ?2 ORDER BY date DESC, id"
    static let selectOfAccount = "SELECT \(columns) FROM row WHERE account = ?1 ORDER BY id"

    init(directory: URL, dataset: Dataset) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent("raw.sqlite").path
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        guard sqlite3_open_v2(path, &db, flags, nil) == SQLITE_OK else { throw failure("open \(path)") }
        try execute(
            """
            PRAGMA journal_mode = WAL;
            PRAGMA synchronous = FULL;
            CREATE TABLE account (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
            CREATE TABLE row (id INTEGER PRIMARY KEY, amount INTEGER NOT NULL, memo TEXT NOT NULL,
                              date REAL NOT NULL, account INTEGER REFERENCES account(id));
            CREATE INDEX row_amount ON row (amount);
            CREATE INDEX row_account ON row (account);
            BEGIN IMMEDIATE;
            """)
        let insert = try prepare("INSERT INTO account (id, name) VALUES (?1, ?2)")
        defer { sqlite3_finalize(insert) }
        for (offset, name) in dataset.accountNames.enumerated() {
            sqlite3_bind_int64(insert, 1, Int64(offset + 1))
            bindText(insert, 2, name)
            guard sqlite3_step(insert) == SQLITE_DONE else { throw failure("insert an account") }
            sqlite3_reset(insert)
        }
        try execute("COMMIT")
    }

    deinit { close() }

    func close() {
        for statement in statements.values { sqlite3_finalize(statement) }
        statements.removeAll()
        if let db { sqlite3_close_v2(db) }
        db = nil
    }

    func insertRows(_ data: Dataset) throws {
        try execute("BEGIN IMMEDIATE")
        let insert = try prepare("INSERT INTO row (\(Self.columns)) VALUES (?1, ?2, ?3, ?4, ?5)")
        defer { sqlite3_finalize(insert) }
        for i in 0..<data.rowCount {
            sqlite3_bind_int64(insert, 1, Int64(i + 1))
            sqlite3_bind_int64(insert, 2, data.amounts[i])
            bindText(insert, 3, data.memos[i])
            sqlite3_bind_double(insert, 4, data.dates[i])
            sqlite3_bind_int64(insert, 5, data.accounts[i])
            guard sqlite3_step(insert) == SQLITE_DONE else { throw failure("insert row \(i + 1)") }
            sqlite3_reset(insert)
        }
        try execute("COMMIT")
        rowCount = data.rowCount
    }

    /// Not inlined, so that `Scripts/count-instructions.sh` finds it by name.
    @inline(never)
    func fetchAll() throws -> Checksum {
        try withAllRows { rows in
            var sum = Checksum()
            sum.add(rows)
            return sum
        }
    }

    func withAllRows<T>(_ body: ([RawRow]) throws -> T) throws -> T {
        try reading { try body(try rows(Self.selectAll, capacity: rowCount)) }
    }

    func lookup(_ keys: [Int64]) throws -> Checksum {
        try reading {
            let select = try prepare(Self.selectByKey)
            defer { sqlite3_finalize(select) }
            var sum = Checksum()
            for key in keys {
                sqlite3_bind_int64(select, 1, key)
                guard sqlite3_step(select) == SQLITE_ROW else { throw failure("look up row \(key)") }
                let row = Self.row(select)
                sum.addAmount(row)
                sqlite3_reset(select)
            }
            return sum
        }
    }

    func predicate(_ windows: [Range<Int64>]) throws -> Checksum {
        try reading {
            var sum = Checksum()
            for window in windows {
                sum.addAmounts(try rows(Self.selectWindow, window.lowerBound, window.upperBound))
            }
            return sum
        }
    }

    func toMany() throws -> Checksum {
        try reading {
            let accounts = try prepare("SELECT id FROM account ORDER BY id")
            defer { sqlite3_finalize(accounts) }
            var sum = Checksum()
            while sqlite3_step(accounts) == SQLITE_ROW {
                sum.addAmounts(try rows(Self.selectOfAccount, sqlite3_column_int64(accounts, 0)))
            }
            return sum
        }
    }

    // MARK: Helpers

    /// Runs `body` inside one read transaction.
    func migrateRows(flag: Int64) throws -> Int {
        try execute(
            """
            BEGIN IMMEDIATE;
            CREATE TABLE row_v2 (id INTEGER PRIMARY KEY, amount INTEGER NOT NULL, note TEXT NOT NULL,
                                 date REAL NOT NULL, account INTEGER REFERENCES account(id), flag INTEGER NOT NULL);
            """)
        let select = try prepare(Self.selectAll)
        defer { sqlite3_finalize(select) }
        let insert = try prepare(
            "INSERT INTO row_v2 (id, amount, note, date, account, flag) VALUES (?1, ?2, ?3, ?4, ?5, ?6)")
        defer { sqlite3_finalize(insert) }
        var copied = 0
        while sqlite3_step(select) == SQLITE_ROW {
            sqlite3_bind_int64(insert, 1, sqlite3_column_int64(select, 0))
            sqlite3_bind_int64(insert, 2, sqlite3_column_int64(select, 1))
            sqlite3_bind_value(insert, 3, sqlite3_column_value(select, 2))
            sqlite3_bind_double(insert, 4, sqlite3_column_double(select, 3))
            sqlite3_bind_value(insert, 5, sqlite3_column_value(select, 4))
            sqlite3_bind_int64(insert, 6, flag)
            guard sqlite3_step(insert) == SQLITE_DONE else { throw failure("copy row \(copied + 1)") }
            sqlite3_reset(insert)
            copied += 1
        }
        try execute(
            """
            DROP TABLE row;
            ALTER TABLE row_v2 RENAME TO row;
            CREATE INDEX row_amount ON row (amount);
            CREATE INDEX row_account ON row (account);
            COMMIT;
            """)
        return copied
    }

    private func reading<T>(_ body: () throws -> T) throws -> T {
        try execute("BEGIN")
        defer { sqlite3_exec(db, "COMMIT", nil, nil, nil) }
        return try body()
    }

    /// Runs a query with integer parameters and reads every row it returns.
    private func rows(_ sql: String, capacity: Int = 0, _ parameters: Int64...) throws -> [RawRow] {
        let statement = try cached(sql)
        defer { sqlite3_reset(statement) }
        for (offset, value) in parameters.enumerated() { sqlite3_bind_int64(statement, Int32(offset + 1), value) }
        var rows: [RawRow] = []
        rows.reserveCapacity(capacity)
        while sqlite3_step(statement) == SQLITE_ROW { rows.append(Self.row(statement)) }
        return rows
    }

    @inline(__always)
    private static func row(_ statement: OpaquePointer?) -> RawRow {
        let memo = sqlite3_column_text(statement, 2)
        let count = Int(sqlite3_column_bytes(statement, 2))
        return RawRow(
            id: sqlite3_column_int64(statement, 0),
            amount: sqlite3_column_int64(statement, 1),
            memo: String(decoding: UnsafeBufferPointer(start: memo, count: count), as: UTF8.self),
            date: sqlite3_column_double(statement, 3),
            account: sqlite3_column_int64(statement, 4))
    }

    private var statements: [String: OpaquePointer] = [:]

    /// A prepared statement kept until ``close()``.
    private func cached(_ sql: String) throws -> OpaquePointer {
        if let statement = statements[sql] { return statement }
        let statement = try prepare(sql)
        statements[sql] = statement
        return statement
    }

    private func prepare(_ sql: String) throws -> OpaquePointer {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK, let statement else {
            throw failure("prepare \(sql)")
        }
        return statement
    }

    private func execute(_ sql: String) throws {
        guard sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK else { throw failure(sql) }
    }

    private func bindText(_ statement: OpaquePointer?, _ index: Int32, _ text: String) {
        var text = text
        text.withUTF8 { bytes in
            _ = bytes.withMemoryRebound(to: CChar.self) {
                sqlite3_bind_text(statement, index, $0.baseAddress, Int32($0.count), strata_sqlite_transient())
            }
        }
    }

    private func failure(_ what: String) -> BenchmarkError {
        .raw("SQLite: \(what): \(db.map { String(cString: sqlite3_errmsg($0)) } ?? "no connection")")
    }

    /// The SQLite library version, for the report.
    static var libraryVersion: String { String(cString: sqlite3_libversion()) }
}
