import CLMDB
import Foundation

/// A thin, non-owning view of an `MDB_txn`: get, put, delete and ordered scans.
///
/// Values handed to closures point into the memory map and are valid only inside the closure.
struct LMDBTransaction {
    let raw: OpaquePointer

    /// Calls `body` with the value stored under `key`, or returns nil when there is none.
    func get<T>(_ dbi: MDB_dbi, _ key: [UInt8], _ body: (UnsafeRawBufferPointer) throws -> T) throws -> T? {
        try key.withUnsafeBytes { try get(dbi, bytes: $0, body) }
    }

    /// ``get(_:_:_:)`` for an 8-byte big-endian primary key, without building the key on the heap.
    func get<T>(_ dbi: MDB_dbi, primaryKey: Int64, _ body: (UnsafeRawBufferPointer) throws -> T) throws -> T? {
        try withUnsafeBytes(of: primaryKey.bigEndian) { try get(dbi, bytes: $0, body) }
    }

    private func get<T>(_ dbi: MDB_dbi, bytes key: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) throws -> T) throws -> T? {
        var data = MDB_val()
        var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        let rc = mdb_get(raw, dbi, &k, &data)
        if rc == MDB_NOTFOUND { return nil }
        try lmdbCheck(rc)
        return try body(UnsafeRawBufferPointer(start: data.mv_data, count: data.mv_size))
    }

    /// Stores `value` under `key`.
    /// - Parameter noOverwrite: fail with `LMDBError.keyExists` when the key is present.
    func put(_ dbi: MDB_dbi, _ key: [UInt8], _ value: [UInt8], noOverwrite: Bool = false) throws(LMDBError) {
        let rc = key.withUnsafeBytes { keyBytes in
            value.withUnsafeBytes { put(dbi, bytes: keyBytes, $0, noOverwrite: noOverwrite) }
        }
        try lmdbCheck(rc)
    }

    /// ``put(_:_:_:noOverwrite:)`` under an 8-byte big-endian primary key.
    func put(_ dbi: MDB_dbi, primaryKey: Int64, _ value: [UInt8], noOverwrite: Bool = false) throws(LMDBError) {
        let rc = withUnsafeBytes(of: primaryKey.bigEndian) { keyBytes in
            value.withUnsafeBytes { put(dbi, bytes: keyBytes, $0, noOverwrite: noOverwrite) }
        }
        try lmdbCheck(rc)
    }

    /// ``put(_:_:_:noOverwrite:)`` with an 8-byte big-endian primary key as the value.
    func put(_ dbi: MDB_dbi, _ key: [UInt8], primaryKeyValue: Int64, noOverwrite: Bool = false) throws(LMDBError) {
        let rc = key.withUnsafeBytes { keyBytes in
            withUnsafeBytes(of: primaryKeyValue.bigEndian) { put(dbi, bytes: keyBytes, $0, noOverwrite: noOverwrite) }
        }
        try lmdbCheck(rc)
    }

    /// ``put(_:_:_:noOverwrite:)`` of bytes in caller-owned memory under an 8-byte big-endian primary key.
    func put(_ dbi: MDB_dbi, primaryKey: Int64, bytes value: UnsafeRawBufferPointer, noOverwrite: Bool = false) throws(LMDBError) {
        let rc = withUnsafeBytes(of: primaryKey.bigEndian) { put(dbi, bytes: $0, value, noOverwrite: noOverwrite) }
        try lmdbCheck(rc)
    }

    /// ``put(_:_:primaryKeyValue:noOverwrite:)`` with a key in caller-owned memory.
    func put(_ dbi: MDB_dbi, keyBytes key: UnsafeRawBufferPointer, primaryKeyValue: Int64, noOverwrite: Bool = false) throws(LMDBError) {
        let rc = withUnsafeBytes(of: primaryKeyValue.bigEndian) { put(dbi, bytes: key, $0, noOverwrite: noOverwrite) }
        try lmdbCheck(rc)
    }

    private func put(_ dbi: MDB_dbi, bytes key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer, noOverwrite: Bool) -> Int32 {
        var k = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        var v = MDB_val(mv_size: value.count, mv_data: UnsafeMutableRawPointer(mutating: value.baseAddress))
        return mdb_put(raw, dbi, &k, &v, noOverwrite ? UInt32(MDB_NOOVERWRITE) : 0)
    }

    /// Deletes `key`; returns false when it was not there.
    @discardableResult
    func delete(_ dbi: MDB_dbi, _ key: [UInt8]) throws(LMDBError) -> Bool {
        let rc = key.withUnsafeBytes { keyBytes in
            var k = MDB_val(mv_size: keyBytes.count, mv_data: UnsafeMutableRawPointer(mutating: keyBytes.baseAddress))
            return mdb_del(raw, dbi, &k, nil)
        }
        if rc == MDB_NOTFOUND { return false }
        try lmdbCheck(rc)
        return true
    }

    /// Visits entries in key order from `start` (or the first key) while keys are below `end`.
    /// `body` returns false to stop early.
    func scan(
        _ dbi: MDB_dbi, from start: [UInt8]? = nil, before end: [UInt8]? = nil,
        _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        var cursor: OpaquePointer?
        try lmdbCheck(mdb_cursor_open(raw, dbi, &cursor))
        defer { mdb_cursor_close(cursor) }
        var key = MDB_val()
        var data = MDB_val()
        var rc: Int32
        if let start {
            rc = start.withUnsafeBytes { startBytes in
                key = MDB_val(mv_size: startBytes.count, mv_data: UnsafeMutableRawPointer(mutating: startBytes.baseAddress))
                return mdb_cursor_get(cursor, &key, &data, MDB_SET_RANGE)
            }
        } else {
            rc = mdb_cursor_get(cursor, &key, &data, MDB_FIRST)
        }
        while rc == 0 {
            let keyBytes = UnsafeRawBufferPointer(start: key.mv_data, count: key.mv_size)
            if let end, Self.compare(keyBytes, end) >= 0 { return }
            if try !body(keyBytes, UnsafeRawBufferPointer(start: data.mv_data, count: data.mv_size)) { return }
            rc = mdb_cursor_get(cursor, &key, &data, MDB_NEXT)
        }
        if rc != MDB_NOTFOUND { try lmdbCheck(rc) }
    }

    /// The last key of a database, if any.
    func lastKey<T>(_ dbi: MDB_dbi, _ body: (UnsafeRawBufferPointer) -> T) throws -> T? {
        var cursor: OpaquePointer?
        try lmdbCheck(mdb_cursor_open(raw, dbi, &cursor))
        defer { mdb_cursor_close(cursor) }
        var key = MDB_val()
        var data = MDB_val()
        let rc = mdb_cursor_get(cursor, &key, &data, MDB_LAST)
        if rc == MDB_NOTFOUND { return nil }
        try lmdbCheck(rc)
        return body(UnsafeRawBufferPointer(start: key.mv_data, count: key.mv_size))
    }

    /// How many entries a database holds.
    func count(_ dbi: MDB_dbi) throws(LMDBError) -> Int {
        var stat = MDB_stat()
        try lmdbCheck(mdb_stat(raw, dbi, &stat))
        return stat.ms_entries
    }

    /// Bytewise comparison, shorter first on a common prefix.
    static func compare(_ a: UnsafeRawBufferPointer, _ b: [UInt8]) -> Int {
        b.withUnsafeBytes { bb in
            let common = min(a.count, bb.count)
            if common > 0, let pa = a.baseAddress, let pb = bb.baseAddress {
                let r = memcmp(pa, pb, common)
                if r != 0 { return Int(r) }
            }
            return a.count - bb.count
        }
    }
}
