import CLMDB
import Foundation
import Strata
import StrataStorage

/// Reads a store the way the migration tests compare it: every row and link through an engine
/// opened with a schema, and the names of the store's tables, indexes or LMDB databases.
enum MigrationStoreProbe {
    /// Everything an engine shows of a store: its version, every row of every entity (key,
    /// version, values) and every join pair.
    struct Contents: Equatable {
        var version: Int
        var rows: [[StoredRow]]
        var links: [[JoinLink]]
    }

    /// The store's contents read with `schema` (which must match the store).
    static func contents(_ store: TestStore, _ schema: StoreSchema) throws -> Contents {
        let engine = try store.configuration.open(schema)
        defer { engine.close() }
        let reader = try engine.makeReader()
        defer { reader.close() }
        let rows = try schema.entities.map { try reader.rows(for: FetchPlan(entity: $0.number)) }
        let links = try schema.joins.map { join in
            try rows[join.leftEntity].flatMap { row in
                try reader.linkedKeys(join: join.number, from: .left, key: row.key).map {
                    JoinLink(join: join.number, leftKey: row.key, rightKey: $0)
                }
            }
        }
        return Contents(version: engine.schemaVersion, rows: rows, links: links)
    }

    /// The names the store keeps: SQLite's tables and indexes (`sqlite_master`), LMDB's named
    /// databases with their entry counts (what `mdb_stat -a` lists), or the tables and indexes
    /// of the store's PostgreSQL schema (`pg_class`).
    static func names(_ store: TestStore) throws -> [String: Int] {
        switch store.kind {
        case .memory: throw EngineKind.noStoreFiles
        case .sqlite:
            let raw = try RawSQLite(path: store.directory.appendingPathComponent("store.sqlite").path)
            let names = try raw.strings("SELECT name FROM sqlite_master WHERE type IN ('table', 'index')")
            return Dictionary(names.map { ($0, 0) }) { first, _ in first }
        case .lmdb:
            return try lmdbDatabases(store)
        case .postgres:
            let names = try PostgresSQL().execute(
                "SELECT relname FROM pg_class WHERE relnamespace = $1::regnamespace AND relkind IN ('r', 'i')",
                [store.postgresSchema])
            return Dictionary(names.compactMap { $0.first ?? nil }.map { ($0, 0) }) { first, _ in first }
        }
    }

    /// LMDB's named databases and their entry counts, read with a raw read-only transaction.
    private static func lmdbDatabases(_ store: TestStore) throws -> [String: Int] {
        var env: OpaquePointer?
        try check(mdb_env_create(&env), "mdb_env_create")
        defer { mdb_env_close(env) }
        try check(mdb_env_set_maxdbs(env, 128), "mdb_env_set_maxdbs")
        let path = store.directory.appendingPathComponent("store.lmdb").path
        try check(mdb_env_open(env, path, UInt32(MDB_RDONLY), 0o644), "mdb_env_open")
        var txn: OpaquePointer?
        try check(mdb_txn_begin(env, nil, UInt32(MDB_RDONLY), &txn), "mdb_txn_begin")
        defer { mdb_txn_abort(txn) }
        var main: MDB_dbi = 0
        try check(mdb_dbi_open(txn, nil, 0, &main), "mdb_dbi_open")
        var cursor: OpaquePointer?
        try check(mdb_cursor_open(txn, main, &cursor), "mdb_cursor_open")
        var names: [String] = []
        var key = MDB_val()
        var data = MDB_val()
        var rc = mdb_cursor_get(cursor, &key, &data, MDB_FIRST)
        while rc == 0 {
            names.append(
                String(decoding: UnsafeRawBufferPointer(start: key.mv_data, count: key.mv_size), as: UTF8.self))
            rc = mdb_cursor_get(cursor, &key, &data, MDB_NEXT)
        }
        mdb_cursor_close(cursor)
        var result: [String: Int] = [:]
        for name in names {
            var dbi: MDB_dbi = 0
            try check(mdb_dbi_open(txn, name, 0, &dbi), "mdb_dbi_open \(name)")
            var stat = MDB_stat()
            try check(mdb_stat(txn, dbi, &stat), "mdb_stat")
            result[name] = stat.ms_entries
        }
        return result
    }

    private static func check(_ rc: Int32, _ operation: String) throws {
        guard rc == 0 else { throw StrataError.io("raw \(operation) failed: \(rc)") }
    }
}
