import CLMDB
import Foundation

/// The raw LMDB baseline: `mdb_*` calls, one transaction per workload, 8-byte big-endian keys
/// and a fixed binary row, the same environment flags as the engine (`MDB_NOTLS`, synced
/// commits), no extra checks.
///
/// Row value: amount i64, date f64, account i64 (native byte order), then the memo's UTF-8.
/// Index databases hold keys only: `amount (sign-flipped, big-endian) ‖ id` and `account ‖ id`.
final class RawLMDB: RawBaseline {
    private var env: OpaquePointer?
    private var rowsDB: MDB_dbi = 0
    private var accountsDB: MDB_dbi = 0
    private var amountIndex: MDB_dbi = 0
    private var accountIndex: MDB_dbi = 0

    init(directory: URL, dataset: Dataset) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try check(mdb_env_create(&env), "mdb_env_create")
        try check(mdb_env_set_maxdbs(env, 8), "mdb_env_set_maxdbs")
        try check(mdb_env_set_mapsize(env, 1 << 30), "mdb_env_set_mapsize")
        try check(mdb_env_open(env, directory.path, UInt32(MDB_NOTLS), 0o644), "mdb_env_open")
        try writing { txn in
            rowsDB = try open(txn, "rows")
            accountsDB = try open(txn, "accounts")
            amountIndex = try open(txn, "rows.amount")
            accountIndex = try open(txn, "rows.account")
            for (offset, name) in dataset.accountNames.enumerated() {
                try put(txn, accountsDB, key: Self.bigEndian(Int64(offset + 1)), value: Array(name.utf8))
            }
        }
    }

    deinit { close() }

    func close() {
        if let env { mdb_env_close(env) }
        env = nil
    }

    func insertRows(_ data: Dataset) throws {
        try writing { txn in
            var value: [UInt8] = []
            value.reserveCapacity(64)
            for i in 0..<data.rowCount {
                let id = Int64(i + 1)
                value.removeAll(keepingCapacity: true)
                Self.append(data.amounts[i], to: &value)
                Self.append(data.dates[i].bitPattern, to: &value)
                Self.append(data.accounts[i], to: &value)
                value.append(contentsOf: data.memos[i].utf8)
                let key = Self.bigEndian(id)
                try put(txn, rowsDB, key: key, value: value)
                try put(txn, amountIndex, key: Self.bigEndian(data.amounts[i] ^ Int64.min) + key, value: [])
                try put(txn, accountIndex, key: Self.bigEndian(data.accounts[i]) + key, value: [])
            }
        }
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
        try reading { txn in
            // Reserved up front (the entry count is in the database's header), so the raw figure
            // does not include the array's regrowth.
            var stat = MDB_stat()
            try check(mdb_stat(txn, rowsDB, &stat), "mdb_stat")
            var rows: [RawRow] = []
            rows.reserveCapacity(stat.ms_entries)
            try scan(txn, rowsDB, from: nil) { key, value in
                rows.append(Self.row(key: key, value))
                return true
            }
            return try body(rows)
        }
    }

    func lookup(_ keys: [Int64]) throws -> Checksum {
        try reading { txn in
            var sum = Checksum()
            for id in keys {
                let row = try get(txn, rowsDB, id)
                sum.addAmount(row)
            }
            return sum
        }
    }

    func predicate(_ windows: [Range<Int64>]) throws -> Checksum {
        try reading { txn in
            var sum = Checksum()
            for window in windows {
                let end = Self.bigEndian(window.upperBound ^ Int64.min)
                var rows: [RawRow] = []
                try scan(txn, amountIndex, from: Self.bigEndian(window.lowerBound ^ Int64.min)) { key, _ in
                    guard memcmp(key.baseAddress!, end, 8) < 0 else { return false }
                    rows.append(try get(txn, rowsDB, Self.readBigEndian(key, at: 8)))
                    return true
                }
                rows.sort { $0.date != $1.date ? $0.date > $1.date : $0.id < $1.id }
                sum.addAmounts(rows)
            }
            return sum
        }
    }

    func toMany() throws -> Checksum {
        try reading { txn in
            var accounts: [Int64] = []
            try scan(txn, accountsDB, from: nil) { key, _ in
                accounts.append(Self.readBigEndian(key, at: 0))
                return true
            }
            var sum = Checksum()
            for account in accounts {
                var rows: [RawRow] = []
                try scan(txn, accountIndex, from: Self.bigEndian(account)) { key, _ in
                    guard Self.readBigEndian(key, at: 0) == account else { return false }
                    rows.append(try get(txn, rowsDB, Self.readBigEndian(key, at: 8)))
                    return true
                }
                sum.addAmounts(rows)
            }
            return sum
        }
    }

    func migrateRows(flag: Int64) throws -> Int {
        var copied = 0
        try writing { txn in
            var cursor: OpaquePointer?
            try check(mdb_cursor_open(txn, rowsDB, &cursor), "mdb_cursor_open")
            defer { mdb_cursor_close(cursor) }
            var key = MDB_val()
            var data = MDB_val()
            var value: [UInt8] = []
            value.reserveCapacity(96)
            var keyBytes: [UInt8] = []
            keyBytes.reserveCapacity(8)
            var rc = mdb_cursor_get(cursor, &key, &data, MDB_FIRST)
            while rc == 0 {
                // The new layout: the old fields, then the flag (the rename changes no bytes).
                value.removeAll(keepingCapacity: true)
                value.append(contentsOf: UnsafeRawBufferPointer(start: data.mv_data, count: data.mv_size))
                Self.append(flag, to: &value)
                // The key is copied first: the cursor's own key bytes may move when the row grows.
                keyBytes.removeAll(keepingCapacity: true)
                keyBytes.append(contentsOf: UnsafeRawBufferPointer(start: key.mv_data, count: key.mv_size))
                rc = keyBytes.withUnsafeMutableBytes { k in
                    value.withUnsafeMutableBytes { bytes in
                        var keyVal = MDB_val(mv_size: k.count, mv_data: k.baseAddress)
                        var newData = MDB_val(mv_size: bytes.count, mv_data: bytes.baseAddress)
                        return mdb_cursor_put(cursor, &keyVal, &newData, UInt32(MDB_CURRENT))
                    }
                }
                try check(rc, "mdb_cursor_put")
                copied += 1
                rc = mdb_cursor_get(cursor, &key, &data, MDB_NEXT)
            }
            if rc != MDB_NOTFOUND { try check(rc, "mdb_cursor_get") }
        }
        return copied
    }

    // MARK: Transactions

    private func writing(_ body: (OpaquePointer) throws -> Void) throws {
        var txn: OpaquePointer?
        try check(mdb_txn_begin(env, nil, 0, &txn), "mdb_txn_begin")
        guard let txn else { throw BenchmarkError.raw("LMDB: no write transaction") }
        do {
            try body(txn)
        } catch {
            mdb_txn_abort(txn)
            throw error
        }
        try check(mdb_txn_commit(txn), "mdb_txn_commit")
    }

    private func reading<T>(_ body: (OpaquePointer) throws -> T) throws -> T {
        var txn: OpaquePointer?
        try check(mdb_txn_begin(env, nil, UInt32(MDB_RDONLY), &txn), "mdb_txn_begin (read)")
        guard let txn else { throw BenchmarkError.raw("LMDB: no read transaction") }
        defer { mdb_txn_abort(txn) }
        return try body(txn)
    }

    private func open(_ txn: OpaquePointer, _ name: String) throws -> MDB_dbi {
        var dbi: MDB_dbi = 0
        try check(mdb_dbi_open(txn, name, UInt32(MDB_CREATE), &dbi), "mdb_dbi_open \(name)")
        return dbi
    }

    // MARK: Access

    private func put(_ txn: OpaquePointer, _ dbi: MDB_dbi, key: [UInt8], value: [UInt8]) throws {
        let rc = key.withUnsafeBytes { k in
            value.withUnsafeBytes { v in
                var keyVal = MDB_val(mv_size: k.count, mv_data: UnsafeMutableRawPointer(mutating: k.baseAddress))
                var dataVal = MDB_val(mv_size: v.count, mv_data: UnsafeMutableRawPointer(mutating: v.baseAddress))
                return mdb_put(txn, dbi, &keyVal, &dataVal, 0)
            }
        }
        try check(rc, "mdb_put")
    }

    private func get(_ txn: OpaquePointer, _ dbi: MDB_dbi, _ id: Int64) throws -> RawRow {
        var key = id.bigEndian
        var data = MDB_val()
        let rc = withUnsafeMutableBytes(of: &key) { k in
            var keyVal = MDB_val(mv_size: 8, mv_data: k.baseAddress)
            return mdb_get(txn, dbi, &keyVal, &data)
        }
        try check(rc, "mdb_get \(id)")
        return Self.row(id: id, UnsafeRawBufferPointer(start: data.mv_data, count: data.mv_size))
    }

    /// Visits entries from `start` (or the first) in key order while `body` returns true.
    private func scan(
        _ txn: OpaquePointer, _ dbi: MDB_dbi, from start: [UInt8]?,
        _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        var cursor: OpaquePointer?
        try check(mdb_cursor_open(txn, dbi, &cursor), "mdb_cursor_open")
        defer { mdb_cursor_close(cursor) }
        var key = MDB_val()
        var data = MDB_val()
        var rc: Int32
        if let start {
            rc = start.withUnsafeBytes { bytes in
                key = MDB_val(mv_size: bytes.count, mv_data: UnsafeMutableRawPointer(mutating: bytes.baseAddress))
                return mdb_cursor_get(cursor, &key, &data, MDB_SET_RANGE)
            }
        } else {
            rc = mdb_cursor_get(cursor, &key, &data, MDB_FIRST)
        }
        while rc == 0 {
            let keep = try body(
                UnsafeRawBufferPointer(start: key.mv_data, count: key.mv_size),
                UnsafeRawBufferPointer(start: data.mv_data, count: data.mv_size))
            if !keep { return }
            rc = mdb_cursor_get(cursor, &key, &data, MDB_NEXT)
        }
        if rc != MDB_NOTFOUND { try check(rc, "mdb_cursor_get") }
    }

    // MARK: Encoding

    @inline(__always)
    private static func row(key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) -> RawRow {
        row(id: readBigEndian(key, at: 0), value)
    }

    @inline(__always)
    private static func row(id: Int64, _ value: UnsafeRawBufferPointer) -> RawRow {
        RawRow(
            id: id,
            amount: value.loadUnaligned(fromByteOffset: 0, as: Int64.self),
            memo: String(decoding: UnsafeRawBufferPointer(rebasing: value[24...]), as: UTF8.self),
            date: Double(bitPattern: value.loadUnaligned(fromByteOffset: 8, as: UInt64.self)),
            account: value.loadUnaligned(fromByteOffset: 16, as: Int64.self))
    }

    private static func bigEndian(_ value: Int64) -> [UInt8] {
        withUnsafeBytes(of: value.bigEndian) { Array($0) }
    }

    private static func readBigEndian(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> Int64 {
        Int64(bigEndian: bytes.loadUnaligned(fromByteOffset: offset, as: Int64.self))
    }

    private static func append<T: FixedWidthInteger>(_ value: T, to out: inout [UInt8]) {
        withUnsafeBytes(of: value) { out.append(contentsOf: $0) }
    }

    private func check(_ rc: Int32, _ what: @autoclosure () -> String) throws {
        guard rc == 0 else { throw BenchmarkError.raw("LMDB: \(what()): \(String(cString: mdb_strerror(rc)))") }
    }

    /// The LMDB library version, for the report.
    static var libraryVersion: String {
        String(cString: mdb_version(nil, nil, nil)).split(separator: ":").first.map(String.init) ?? "LMDB"
    }
}
