import Foundation

/// The raw PostgreSQL baseline: libpq on one connection, in a schema of its own on the run's
/// server (``BenchmarkPostgres``); statements prepared once with binary parameters and binary
/// results, one transaction per workload, the same two indexes as the Strata store.
///
/// The insert sends its rows as one prepared `INSERT` each, pipelined (libpq's pipeline mode,
/// batches of 1,000) inside one transaction: what a careful libpq program does short of `COPY`.
/// Reads are one statement each (one round trip per lookup, as Strata's object lookups need).
/// No foreign key: Strata's engine declares none either, so neither side pays for one.
final class RawPostgres: RawBaseline {
    private var link: PGLink?
    private let schema: String
    /// Rows inserted by ``insertRows(_:)``: fetch-all reserves its array for them up front.
    private var rowCount = 0

    private var table: String { "\"\(schema)\".row" }
    private var columns: String { "id, amount, memo, date, account" }
    private var selectAll: String { "SELECT \(columns) FROM \(table) ORDER BY id" }

    init(directory: URL, dataset: Dataset) throws {
        let url = try BenchmarkPostgres.requireURL()
        schema = BenchmarkPostgres.schema(for: directory)
        let link = try PGLink(url: url, applicationName: "strata-bench-raw")
        self.link = link
        try link.execute(
            """
            SET client_min_messages = warning;
            DROP SCHEMA IF EXISTS "\(schema)" CASCADE;
            CREATE SCHEMA "\(schema)";
            CREATE TABLE "\(schema)".account (id int8 PRIMARY KEY, name text NOT NULL);
            CREATE TABLE \(table) (id int8 PRIMARY KEY, amount int8 NOT NULL, memo text NOT NULL,
                                   date float8 NOT NULL, account int8 NOT NULL);
            CREATE INDEX row_amount ON \(table) (amount);
            CREATE INDEX row_account ON \(table) (account);
            """)
        try link.execute("BEGIN")
        try link.pipeline(
            "INSERT INTO \"\(schema)\".account (id, name) VALUES ($1, $2)", types: [PGType.int8, PGType.text],
            count: dataset.accountNames.count
        ) { index, parameters in
            parameters.set(0, Int64(index + 1))
            parameters.set(1, dataset.accountNames[index])
        }
        try link.execute("COMMIT")
    }

    deinit { close() }

    func close() { link = nil }

    private func connection() throws -> PGLink {
        guard let link else { throw BenchmarkError.raw("PostgreSQL: the raw store is closed") }
        return link
    }

    func insertRows(_ data: Dataset) throws {
        let link = try connection()
        try link.execute("BEGIN")
        do {
            try link.pipeline(
                "INSERT INTO \(table) (\(columns)) VALUES ($1, $2, $3, $4, $5)",
                types: [PGType.int8, PGType.int8, PGType.text, PGType.float8, PGType.int8], count: data.rowCount
            ) { i, parameters in
                parameters.set(0, Int64(i + 1))
                parameters.set(1, data.amounts[i])
                parameters.set(2, data.memos[i])
                parameters.set(3, data.dates[i])
                parameters.set(4, data.accounts[i])
            }
            try link.execute("COMMIT")
        } catch {
            _ = try? link.execute("ROLLBACK")
            throw error
        }
        rowCount = data.rowCount
    }

    func fetchAll() throws -> Checksum {
        try withAllRows { rows in
            var sum = Checksum()
            sum.add(rows)
            return sum
        }
    }

    func withAllRows<T>(_ body: ([RawRow]) throws -> T) throws -> T {
        try reading { link in try body(try rows(link, selectAll, capacity: rowCount)) }
    }

    func lookup(_ keys: [Int64]) throws -> Checksum {
        try reading { link in
            var sum = Checksum()
            let select = "SELECT \(columns) FROM \(table) WHERE id = $1"
            for key in keys {
                try link.query(select, [key]) { result in
                    guard result.count == 1 else { throw BenchmarkError.raw("PostgreSQL: no row \(key)") }
                    sum.addAmount(Self.row(result, 0))
                }
            }
            return sum
        }
    }

    func predicate(_ windows: [Range<Int64>]) throws -> Checksum {
        try reading { link in
            var sum = Checksum()
            let select = "SELECT \(columns) FROM \(table) WHERE amount >= $1 AND amount < $2 ORDER BY date DESC, id"
            for window in windows {
                sum.addAmounts(try rows(link, select, window.lowerBound, window.upperBound))
            }
            return sum
        }
    }

    func toMany() throws -> Checksum {
        try reading { link in
            var sum = Checksum()
            let accounts = try link.query("SELECT id FROM \"\(schema)\".account ORDER BY id") { result in
                (0..<result.count).map { result.int64($0, 0) }
            }
            let select = "SELECT \(columns) FROM \(table) WHERE account = $1 ORDER BY id"
            for account in accounts { sum.addAmounts(try rows(link, select, account)) }
            return sum
        }
    }

    func migrateRows(flag: Int64) throws -> Int {
        let link = try connection()
        try link.execute(
            """
            BEGIN;
            CREATE TABLE "\(schema)".row_v2 (id int8 PRIMARY KEY, amount int8 NOT NULL, note text NOT NULL,
                                             date float8 NOT NULL, account int8 NOT NULL, flag int8 NOT NULL);
            """)
        do {
            let copied = try link.query(
                """
                WITH copied AS (INSERT INTO "\(schema)".row_v2 (id, amount, note, date, account, flag)
                                SELECT id, amount, memo, date, account, $1 FROM \(table) RETURNING 1)
                SELECT count(*)::int8 FROM copied
                """, [flag]
            ) { $0.int64(0, 0) }
            try link.execute(
                """
                DROP TABLE \(table);
                ALTER TABLE "\(schema)".row_v2 RENAME TO row;
                CREATE INDEX row_amount ON \(table) (amount);
                CREATE INDEX row_account ON \(table) (account);
                COMMIT;
                """)
            return Int(copied)
        } catch {
            _ = try? link.execute("ROLLBACK")
            throw error
        }
    }

    // MARK: Helpers

    /// Runs `body` inside one read-only snapshot transaction (what a Strata reader holds).
    private func reading<T>(_ body: (PGLink) throws -> T) throws -> T {
        let link = try connection()
        try link.execute("BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        defer { _ = try? link.execute("COMMIT") }
        return try body(link)
    }

    /// Runs a query with int8 parameters and reads every row it returns.
    private func rows(_ link: PGLink, _ sql: String, capacity: Int = 0, _ parameters: Int64...) throws -> [RawRow] {
        try link.query(sql, parameters) { result in
            var rows: [RawRow] = []
            rows.reserveCapacity(max(capacity, result.count))
            for index in 0..<result.count { rows.append(Self.row(result, index)) }
            return rows
        }
    }

    @inline(__always)
    private static func row(_ result: PGRows, _ index: Int) -> RawRow {
        RawRow(
            id: result.int64(index, 0), amount: result.int64(index, 1), memo: result.text(index, 2),
            date: result.double(index, 3), account: result.int64(index, 4))
    }
}
