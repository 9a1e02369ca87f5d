import CSQLite
import Foundation

/// The raw SQLite baseline of workloads 15–20: prepared statements, one transaction each, WAL
/// and `synchronous = FULL` like the engine. The set-based jobs are one SQL statement each.
final class RawSQLiteSet: RawSetBaseline {
    private var db: OpaquePointer?

    init(directory: URL, create: Bool) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent("raw-set.sqlite").path
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        guard sqlite3_open_v2(path, &db, flags, nil) == SQLITE_OK else { throw failure("open \(path)") }
        try execute("PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL;")
        guard create else { return }
        try execute(
            """
            CREATE TABLE entry (id INTEGER PRIMARY KEY, external_id INTEGER NOT NULL, category TEXT NOT NULL,
                                amount INTEGER NOT NULL, note TEXT NOT NULL);
            CREATE UNIQUE INDEX entry_external_id ON entry (external_id);
            CREATE INDEX entry_category ON entry (category);
            CREATE TABLE line (id INTEGER PRIMARY KEY, entry INTEGER REFERENCES entry(id), label TEXT NOT NULL);
            CREATE INDEX line_entry ON line (entry);
            """)
    }

    deinit { close() }

    func close() {
        if let db { sqlite3_close_v2(db) }
        db = nil
    }

    func insertEntries(_ data: SetDataset) throws {
        try writing {
            let insert = try prepare(
                "INSERT INTO entry (id, external_id, category, amount, note) VALUES (?1, ?2, ?3, ?4, ?5)")
            defer { sqlite3_finalize(insert) }
            for i in 0..<data.rowCount {
                sqlite3_bind_int64(insert, 1, Int64(i + 1))
                sqlite3_bind_int64(insert, 2, data.externalID(i))
                bindText(insert, 3, data.category(i))
                sqlite3_bind_int64(insert, 4, data.amounts[i])
                bindText(insert, 5, data.notes[i])
                guard sqlite3_step(insert) == SQLITE_DONE else { throw failure("insert entry \(i + 1)") }
                sqlite3_reset(insert)
            }
        }
    }

    func insertLines(_ data: SetDataset) throws {
        try writing {
            let insert = try prepare("INSERT INTO line (id, entry, label) VALUES (?1, ?2, ?3)")
            defer { sqlite3_finalize(insert) }
            for j in 0..<data.lineCount {
                sqlite3_bind_int64(insert, 1, Int64(j + 1))
                sqlite3_bind_int64(insert, 2, Int64(data.lineEntry(j) + 1))
                bindText(insert, 3, data.lineLabel(j))
                guard sqlite3_step(insert) == SQLITE_DONE else { throw failure("insert line \(j + 1)") }
                sqlite3_reset(insert)
            }
        }
    }

    func upsert(_ rows: UpsertRows) throws -> Int {
        try writing {
            let upsert = try prepare(
                """
                INSERT INTO entry (external_id, category, amount, note) VALUES (?1, ?2, ?3, ?4)
                ON CONFLICT (external_id) DO UPDATE SET amount = excluded.amount, note = excluded.note
                """)
            defer { sqlite3_finalize(upsert) }
            for k in 0..<rows.count {
                sqlite3_bind_int64(upsert, 1, rows.externalIDs[k])
                bindText(upsert, 2, rows.categories[k])
                sqlite3_bind_int64(upsert, 3, rows.amounts[k])
                bindText(upsert, 4, rows.notes[k])
                guard sqlite3_step(upsert) == SQLITE_DONE else { throw failure("upsert row \(k)") }
                sqlite3_reset(upsert)
            }
            return rows.count
        }
    }

    func add(_ amount: Int64, toCategory category: String) throws -> Int {
        try writing {
            let update = try prepare("UPDATE entry SET amount = amount + ?1 WHERE category = ?2")
            defer { sqlite3_finalize(update) }
            sqlite3_bind_int64(update, 1, amount)
            bindText(update, 2, category)
            guard sqlite3_step(update) == SQLITE_DONE else { throw failure("update \(category)") }
            return Int(sqlite3_changes(db))
        }
    }

    func delete(category: String) throws -> Int {
        try writing {
            var deleted = 0
            for sql in [
                "DELETE FROM line WHERE entry IN (SELECT id FROM entry WHERE category = ?1)",
                "DELETE FROM entry WHERE category = ?1",
            ] {
                let delete = try prepare(sql)
                defer { sqlite3_finalize(delete) }
                bindText(delete, 1, category)
                guard sqlite3_step(delete) == SQLITE_DONE else { throw failure(sql) }
                deleted += Int(sqlite3_changes(db))
            }
            return deleted
        }
    }

    func sumByCategory() throws -> [(category: String, sum: Int64)] {
        try reading {
            let select = try prepare("SELECT category, SUM(amount) FROM entry GROUP BY category")
            defer { sqlite3_finalize(select) }
            var groups: [(category: String, sum: Int64)] = []
            while sqlite3_step(select) == SQLITE_ROW {
                groups.append((Self.text(select, 0), sqlite3_column_int64(select, 1)))
            }
            return groups
        }
    }

    func streamEntries(sample: () -> Void) throws -> Checksum {
        try reading {
            let select = try prepare("SELECT id, external_id, category, amount, note FROM entry ORDER BY id")
            defer { sqlite3_finalize(select) }
            var sum = Checksum()
            var count = 0
            while sqlite3_step(select) == SQLITE_ROW {
                let category = Self.text(select, 2)
                sum.addEntry(
                    externalID: sqlite3_column_int64(select, 1), category: category.utf8.count,
                    amount: sqlite3_column_int64(select, 3), note: Self.text(select, 4))
                count += 1
                if count % 10_000 == 0 { sample() }
            }
            return sum
        }
    }

    // MARK: Helpers

    private func writing<T>(_ body: () throws -> T) throws -> T {
        try execute("BEGIN IMMEDIATE")
        do {
            let value = try body()
            try execute("COMMIT")
            return value
        } catch {
            sqlite3_exec(db, "ROLLBACK", nil, nil, nil)
            throw error
        }
    }

    private func reading<T>(_ body: () throws -> T) throws -> T {
        try execute("BEGIN")
        defer { sqlite3_exec(db, "COMMIT", nil, nil, nil) }
        return try body()
    }

    private static func text(_ statement: OpaquePointer?, _ column: Int32) -> String {
        let count = Int(sqlite3_column_bytes(statement, column))
        return String(
            decoding: UnsafeBufferPointer(start: sqlite3_column_text(statement, column), count: count), as: UTF8.self)
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
}
