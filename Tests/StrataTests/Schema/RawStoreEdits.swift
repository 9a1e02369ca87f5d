import CLMDB
import Foundation
import Strata
import StrataConformance

/// Raw writes that turn a store into one made by the format before recorded schemas: the
/// `schema` metadata entry removed, as that code never wrote it. (On PostgreSQL, raw SQL on the
/// store's schema through `PostgresSQL`.)
enum RawStoreEdits {
    /// Whether the store can be read and edited behind its engine's back: not an in-memory store,
    /// which only its engine reaches. A migration test checks what the engine shows on every
    /// engine, and the raw look (recorded JSON, table and index names, bytes) only where there is
    /// one; a test whose subject is the raw store takes ``EngineKind/rawStores``.
    static func isReadable(_ store: TestStore) -> Bool { store.kind.capabilities.hasStoreFiles }

    /// Removes the recorded schema from a closed store.
    static func removeRecordedSchema(_ store: TestStore) throws {
        switch store.kind {
        case .memory: throw EngineKind.noStoreFiles
        case .sqlite:
            let raw = try RawSQLite(path: store.directory.appendingPathComponent("store.sqlite").path)
            try raw.execute("DELETE FROM strata_metadata WHERE key = 'schema'")
        case .postgres:
            try PostgresSQL().execute(
                "DELETE FROM \(PostgresSQL.identifier(store.postgresSchema)).strata_metadata WHERE key = 'schema'")
        case .lmdb:
            try withMeta(store) { txn, meta in
                var key = Array("schema".utf8)
                try key.withUnsafeMutableBytes { bytes in
                    var value = MDB_val(mv_size: bytes.count, mv_data: bytes.baseAddress)
                    try check(mdb_del(txn, meta, &value, nil), "mdb_del")
                }
            }
        }
    }

    /// The recorded schema's JSON, read the way a person would (`sqlite3` / `mdb_dump` / `psql` give the same text).
    static func recordedJSON(_ store: TestStore) throws -> String? {
        switch store.kind {
        case .memory: throw EngineKind.noStoreFiles
        case .sqlite:
            let raw = try RawSQLite(path: store.directory.appendingPathComponent("store.sqlite").path)
            return try raw.strings("SELECT value FROM strata_metadata WHERE key = 'schema'").first
        case .postgres:
            return try PostgresSQL().value(
                "SELECT value FROM \(PostgresSQL.identifier(store.postgresSchema)).strata_metadata WHERE key = 'schema'"
            )
        case .lmdb:
            var text: String?
            try withMeta(store) { txn, meta in
                var key = Array("schema".utf8)
                try key.withUnsafeMutableBytes { bytes in
                    var keyValue = MDB_val(mv_size: bytes.count, mv_data: bytes.baseAddress)
                    var data = MDB_val()
                    let rc = mdb_get(txn, meta, &keyValue, &data)
                    if rc == MDB_NOTFOUND { return }
                    try check(rc, "mdb_get")
                    text = String(
                        decoding: UnsafeRawBufferPointer(start: data.mv_data, count: data.mv_size), as: UTF8.self)
                }
            }
            return text
        }
    }

    /// Removes an LMDB store's `strata.history` database and `history_token` entry (closed
    /// store), leaving it as the format before persistent history made it.
    static func removeLMDBHistory(_ store: TestStore) throws {
        try withMeta(store) { txn, meta in
            var history: MDB_dbi = 0
            try check(mdb_dbi_open(txn, "strata.history", 0, &history), "mdb_dbi_open")
            try check(mdb_drop(txn, history, 1), "mdb_drop")
            var key = Array("history_token".utf8)
            try key.withUnsafeMutableBytes { bytes in
                var value = MDB_val(mv_size: bytes.count, mv_data: bytes.baseAddress)
                let rc = mdb_del(txn, meta, &value, nil)
                if rc != MDB_NOTFOUND { try check(rc, "mdb_del") }
            }
        }
    }

    /// Changes one letter of the author `tests` in an LMDB store's history entry `token` (closed store).
    static func damageLMDBHistory(_ store: TestStore, token: Int64) throws {
        try withMeta(store) { txn, _ in
            var history: MDB_dbi = 0
            try check(mdb_dbi_open(txn, "strata.history", 0, &history), "mdb_dbi_open")
            var key = withUnsafeBytes(of: UInt64(bitPattern: token).bigEndian) { Array($0) }
            try key.withUnsafeMutableBytes { bytes in
                var keyValue = MDB_val(mv_size: bytes.count, mv_data: bytes.baseAddress)
                var data = MDB_val()
                try check(mdb_get(txn, history, &keyValue, &data), "mdb_get")
                var value = Array(UnsafeRawBufferPointer(start: data.mv_data, count: data.mv_size))
                // The case of one letter of the author "tests": still valid JSON, so only the
                // checksum tells.
                let author = Array("tests".utf8)
                let starts = 0...(value.count - author.count)
                guard let at = starts.first(where: { value[$0..<$0 + author.count].elementsEqual(author) }) else {
                    throw StrataError.io("no author \"tests\" in history entry \(token)")
                }
                value[at] ^= 0x20
                try value.withUnsafeMutableBytes { valueBytes in
                    var newValue = MDB_val(mv_size: valueBytes.count, mv_data: valueBytes.baseAddress)
                    try check(mdb_put(txn, history, &keyValue, &newValue, 0), "mdb_put")
                }
            }
        }
    }

    /// The names of an LMDB store's named databases (closed store).
    static func lmdbDatabaseNames(_ store: TestStore) throws -> [String] {
        var names: [String] = []
        try withMeta(store) { txn, _ in
            var main: MDB_dbi = 0
            try check(mdb_dbi_open(txn, nil, 0, &main), "mdb_dbi_open")
            var cursor: OpaquePointer?
            try check(mdb_cursor_open(txn, main, &cursor), "mdb_cursor_open")
            defer { mdb_cursor_close(cursor) }
            var key = MDB_val()
            var data = MDB_val()
            var rc = mdb_cursor_get(cursor, &key, &data, MDB_FIRST)
            while rc == 0 {
                names.append(
                    String(decoding: UnsafeRawBufferPointer(start: key.mv_data, count: key.mv_size), as: UTF8.self))
                rc = mdb_cursor_get(cursor, &key, &data, MDB_NEXT)
            }
            if rc != MDB_NOTFOUND { try check(rc, "mdb_cursor_get") }
        }
        return names
    }

    /// Runs `body` in a raw write transaction on the store's `strata.meta` database, then commits.
    private static func withMeta(_ store: TestStore, _ body: (OpaquePointer?, MDB_dbi) throws -> Void) throws {
        var env: OpaquePointer?
        try check(mdb_env_create(&env), "mdb_env_create")
        defer { mdb_env_close(env) }
        try check(mdb_env_set_maxdbs(env, 64), "mdb_env_set_maxdbs")
        try check(
            mdb_env_open(env, store.directory.appendingPathComponent("store.lmdb").path, 0, 0o644), "mdb_env_open")
        var txn: OpaquePointer?
        try check(mdb_txn_begin(env, nil, 0, &txn), "mdb_txn_begin")
        do {
            var meta: MDB_dbi = 0
            try check(mdb_dbi_open(txn, "strata.meta", 0, &meta), "mdb_dbi_open")
            try body(txn, meta)
            try check(mdb_txn_commit(txn), "mdb_txn_commit")
        } catch {
            mdb_txn_abort(txn)
            throw error
        }
    }

    private static func check(_ rc: Int32, _ operation: String) throws {
        guard rc == 0 else { throw StrataError.io("raw \(operation) failed: \(rc)") }
    }
}
