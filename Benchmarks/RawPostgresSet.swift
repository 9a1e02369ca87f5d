import Foundation

/// The raw PostgreSQL baseline of workloads 15–20: libpq on one connection, in a schema of its
/// own, binary parameters and results, one transaction per job.
///
/// Inserts and upserts send their rows as arrays, 10,000 rows a statement:
/// `INSERT … SELECT * FROM unnest($1::int8[], …)` (with `ON CONFLICT (external_id) DO UPDATE`
/// for the upsert), the set-wise way short of `COPY`. Update, delete and the grouped sum are one
/// SQL statement each (the delete two: the lines, then the entries); the stream reads a binary
/// cursor 1,000 rows a `FETCH`.
final class RawPostgresSet: RawSetBaseline {
    private var link: PGLink?
    private let schema: String
    /// The next entry key the upsert gives a new row.
    private var nextID: Int64 = 1
    static let chunk = 10_000

    private var entry: String { "\"\(schema)\".entry" }
    private var line: String { "\"\(schema)\".line" }

    init(schema: String, create: Bool) throws {
        self.schema = schema
        let link = try PGLink(url: try BenchmarkPostgres.requireURL(), applicationName: "strata-bench-raw")
        self.link = link
        guard create else { return }
        try link.execute(
            """
            SET client_min_messages = warning;
            DROP SCHEMA IF EXISTS "\(schema)" CASCADE;
            CREATE SCHEMA "\(schema)";
            CREATE TABLE \(entry) (id int8 PRIMARY KEY, external_id int8 NOT NULL, category text NOT NULL,
                                   amount int8 NOT NULL, note text NOT NULL);
            CREATE UNIQUE INDEX entry_external_id ON \(entry) (external_id);
            CREATE INDEX entry_category ON \(entry) (category);
            CREATE TABLE \(line) (id int8 PRIMARY KEY, entry int8 NOT NULL, label text NOT NULL);
            CREATE INDEX line_entry ON \(line) (entry);
            """)
    }

    deinit { close() }

    func close() { link = nil }

    private func connection() throws -> PGLink {
        guard let link else { throw BenchmarkError.raw("PostgreSQL: the raw store is closed") }
        return link
    }

    func insertEntries(_ data: SetDataset) throws {
        try writing { link in
            let insert =
                "INSERT INTO \(entry) SELECT * FROM unnest($1::int8[], $2::int8[], $3::text[], $4::int8[], $5::text[])"
            var start = 0
            while start < data.rowCount {
                let part = start..<min(start + Self.chunk, data.rowCount)
                try link.command(
                    insert,
                    [
                        .int8Array(part.lazy.map { Int64($0 + 1) }), .int8Array(part.lazy.map { data.externalID($0) }),
                        .textArray(part.lazy.map { data.category($0) }), .int8Array(data.amounts[part]),
                        .textArray(data.notes[part]),
                    ])
                start = part.upperBound
            }
            nextID = Int64(data.rowCount + 1)
        }
    }

    func insertLines(_ data: SetDataset) throws {
        try writing { link in
            let insert = "INSERT INTO \(line) SELECT * FROM unnest($1::int8[], $2::int8[], $3::text[])"
            var start = 0
            while start < data.lineCount {
                let part = start..<min(start + Self.chunk, data.lineCount)
                try link.command(
                    insert,
                    [
                        .int8Array(part.lazy.map { Int64($0 + 1) }),
                        .int8Array(part.lazy.map { Int64(data.lineEntry($0) + 1) }),
                        .textArray(part.lazy.map { data.lineLabel($0) }),
                    ])
                start = part.upperBound
            }
        }
    }

    func upsert(_ rows: UpsertRows) throws -> Int {
        try writing { link in
            let upsert = """
                INSERT INTO \(entry) SELECT * FROM unnest($1::int8[], $2::int8[], $3::text[], $4::int8[], $5::text[])
                ON CONFLICT (external_id) DO UPDATE SET amount = excluded.amount, note = excluded.note
                """
            var written = 0
            var start = 0
            while start < rows.count {
                let part = start..<min(start + Self.chunk, rows.count)
                // New rows take the next keys; an updated row's proposed key is not used.
                let first = nextID
                nextID += Int64(part.count)
                written += try link.command(
                    upsert,
                    [
                        .int8Array(part.lazy.map { first + Int64($0 - part.lowerBound) }),
                        .int8Array(rows.externalIDs[part]), .textArray(rows.categories[part]),
                        .int8Array(rows.amounts[part]), .textArray(rows.notes[part]),
                    ])
                start = part.upperBound
            }
            return written
        }
    }

    func add(_ amount: Int64, toCategory category: String) throws -> Int {
        try writing { link in
            try link.command(
                "UPDATE \(entry) SET amount = amount + $1 WHERE category = $2", [.int8(amount), .text(category)])
        }
    }

    func delete(category: String) throws -> Int {
        try writing { link in
            let lines = try link.command(
                "DELETE FROM \(line) WHERE entry IN (SELECT id FROM \(entry) WHERE category = $1)", [.text(category)])
            let entries = try link.command("DELETE FROM \(entry) WHERE category = $1", [.text(category)])
            return lines + entries
        }
    }

    func sumByCategory() throws -> [(category: String, sum: Int64)] {
        try reading { link in
            try link.run("SELECT category, sum(amount)::int8 FROM \(entry) GROUP BY category", []) { result, _ in
                (0..<result.count).map { (result.text($0, 0), result.int64($0, 1)) }
            }
        }
    }

    func streamEntries(sample: () -> Void) throws -> Checksum {
        try reading { link in
            try link.execute(
                "DECLARE entries BINARY NO SCROLL CURSOR FOR "
                    + "SELECT id, external_id, category, amount, note FROM \(entry) ORDER BY id"
            )
            var sum = Checksum()
            var count = 0
            while true {
                let fetched = try link.rows("FETCH FORWARD 1000 FROM entries") { result in
                    for index in 0..<result.count {
                        sum.addEntry(
                            externalID: result.int64(index, 1), category: result.text(index, 2).utf8.count,
                            amount: result.int64(index, 3), note: result.text(index, 4))
                        count += 1
                        if count % 10_000 == 0 { sample() }
                    }
                    return result.count
                }
                if fetched == 0 { break }
            }
            try link.execute("CLOSE entries")
            return sum
        }
    }

    // MARK: Transactions

    private func writing<T>(_ body: (PGLink) throws -> T) throws -> T {
        let link = try connection()
        try link.execute("BEGIN")
        do {
            let value = try body(link)
            try link.execute("COMMIT")
            return value
        } catch {
            _ = try? link.execute("ROLLBACK")
            throw error
        }
    }

    /// One read-only snapshot transaction (what a Strata reader holds).
    private func reading<T>(_ body: (PGLink) throws -> T) throws -> T {
        let link = try connection()
        try link.execute("BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        defer { _ = try? link.execute("COMMIT") }
        return try body(link)
    }
}
