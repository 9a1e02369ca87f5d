import CLMDB
import Foundation

/// The raw LMDB baseline of workloads 15–20: `mdb_*` calls in one transaction each, the same
/// environment flags as the engine, no extra checks. What SQL does in one statement is a loop
/// here: an index range scan, then point reads and writes.
///
/// `entries`: key `id` (8 bytes big-endian) → external ID i64, amount i64 (native order), the
/// category's length (1 byte) and UTF-8, then the note's UTF-8. Index databases hold keys only:
/// `entries.external` (external ID, sign-flipped big-endian → value: the id),
/// `entries.category` (`category ‖ 0 ‖ id`), `lines.entry` (`entry id ‖ line id`); `lines`: key
/// `id` → entry id i64, then the label's UTF-8.
final class RawLMDBSet: RawSetBaseline {
    private var env: OpaquePointer?
    private var entries: MDB_dbi = 0
    private var externalIndex: MDB_dbi = 0
    private var categoryIndex: MDB_dbi = 0
    private var lines: MDB_dbi = 0
    private var lineIndex: MDB_dbi = 0
    /// The next entry key the upsert gives a new row.
    private var nextID: Int64 = 1

    init(directory: URL, create: Bool) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try check(mdb_env_create(&env), "mdb_env_create")
        try check(mdb_env_set_maxdbs(env, 8), "mdb_env_set_maxdbs")
        try check(mdb_env_set_mapsize(env, 4 << 30), "mdb_env_set_mapsize")
        try check(mdb_env_open(env, directory.path, UInt32(MDB_NOTLS), 0o644), "mdb_env_open")
        try writing { txn in
            entries = try open(txn, "entries")
            externalIndex = try open(txn, "entries.external")
            categoryIndex = try open(txn, "entries.category")
            lines = try open(txn, "lines")
            lineIndex = try open(txn, "lines.entry")
        }
    }

    deinit { close() }

    func close() {
        if let env { mdb_env_close(env) }
        env = nil
    }

    func insertEntries(_ data: SetDataset) throws {
        try writing { txn in
            var value: [UInt8] = []
            value.reserveCapacity(64)
            for i in 0..<data.rowCount {
                let id = Int64(i + 1)
                let category = data.category(i)
                Self.encode(data.externalID(i), category, data.amounts[i], data.notes[i], into: &value)
                let key = Self.bigEndian(id)
                try put(txn, entries, key, value)
                try put(txn, externalIndex, Self.bigEndian(data.externalID(i) ^ Int64.min), key)
                try put(txn, categoryIndex, Array(category.utf8) + [0] + key, [])
            }
            nextID = Int64(data.rowCount + 1)
        }
    }

    func insertLines(_ data: SetDataset) throws {
        try writing { txn in
            for j in 0..<data.lineCount {
                let key = Self.bigEndian(Int64(j + 1))
                let entry = Int64(data.lineEntry(j) + 1)
                var value: [UInt8] = []
                Self.append(entry, to: &value)
                value.append(contentsOf: data.lineLabel(j).utf8)
                try put(txn, lines, key, value)
                try put(txn, lineIndex, Self.bigEndian(entry) + key, [])
            }
        }
    }

    func upsert(_ rows: UpsertRows) throws -> Int {
        try writing { txn in
            var value: [UInt8] = []
            value.reserveCapacity(64)
            for k in 0..<rows.count {
                let externalKey = Self.bigEndian(rows.externalIDs[k] ^ Int64.min)
                if let idBytes = try get(txn, externalIndex, externalKey, { Array($0) }) {
                    // Existing: rewrite the row with the new amount and note, category kept.
                    guard let old = try get(txn, entries, idBytes, { Self.decode($0) }) else {
                        throw BenchmarkError.raw("LMDB: the external ID index names a missing entry")
                    }
                    Self.encode(old.externalID, old.category, rows.amounts[k], rows.notes[k], into: &value)
                    try put(txn, entries, idBytes, value)
                } else {
                    let key = Self.bigEndian(nextID)
                    nextID += 1
                    Self.encode(rows.externalIDs[k], rows.categories[k], rows.amounts[k], rows.notes[k], into: &value)
                    try put(txn, entries, key, value)
                    try put(txn, externalIndex, externalKey, key)
                    try put(txn, categoryIndex, Array(rows.categories[k].utf8) + [0] + key, [])
                }
            }
            return rows.count
        }
    }

    func add(_ amount: Int64, toCategory category: String) throws -> Int {
        try writing { txn in
            let keys = try entryKeys(txn, category: category)
            for key in keys {
                guard var value = try get(txn, entries, key, { Array($0) }) else {
                    throw BenchmarkError.raw("LMDB: the category index names a missing entry")
                }
                value.withUnsafeMutableBytes { bytes in
                    let old = bytes.loadUnaligned(fromByteOffset: 8, as: Int64.self)
                    bytes.storeBytes(of: old &+ amount, toByteOffset: 8, as: Int64.self)
                }
                try put(txn, entries, key, value)
            }
            return keys.count
        }
    }

    func delete(category: String) throws -> Int {
        try writing { txn in
            let prefix = Array(category.utf8) + [0]
            let keys = try entryKeys(txn, category: category)
            var deleted = 0
            for key in keys {
                // The entry's lines first, through the line index.
                var lineKeys: [[UInt8]] = []
                try scan(txn, lineIndex, from: key) { indexKey in
                    guard indexKey.count == 16, memcmp(indexKey.baseAddress!, key, 8) == 0 else { return false }
                    lineKeys.append(Array(indexKey))
                    return true
                }
                for indexKey in lineKeys {
                    try del(txn, lines, Array(indexKey[8...]))
                    try del(txn, lineIndex, indexKey)
                    deleted += 1
                }
                guard let externalID = try get(txn, entries, key, { Self.decode($0).externalID }) else {
                    throw BenchmarkError.raw("LMDB: the category index names a missing entry")
                }
                try del(txn, externalIndex, Self.bigEndian(externalID ^ Int64.min))
                try del(txn, categoryIndex, prefix + key)
                try del(txn, entries, key)
                deleted += 1
            }
            return deleted
        }
    }

    func sumByCategory() throws -> [(category: String, sum: Int64)] {
        try reading { txn in
            // Groups by the category's bytes, a String made once per group.
            var groups: [(bytes: [UInt8], sum: Int64)] = []
            try scanEntries(txn) { value in
                let length = Int(value[16])
                let category = UnsafeRawBufferPointer(rebasing: value[17..<(17 + length)])
                let amount = value.loadUnaligned(fromByteOffset: 8, as: Int64.self)
                if let index = groups.firstIndex(where: { $0.bytes.elementsEqual(category) }) {
                    groups[index].sum &+= amount
                } else {
                    groups.append((Array(category), amount))
                }
            }
            return groups.map { (String(decoding: $0.bytes, as: UTF8.self), $0.sum) }
        }
    }

    func streamEntries(sample: () -> Void) throws -> Checksum {
        try reading { txn in
            var sum = Checksum()
            var count = 0
            try scanEntries(txn) { value in
                let entry = Self.decode(value)
                sum.addEntry(
                    externalID: entry.externalID, category: entry.category.utf8.count, amount: entry.amount,
                    note: entry.note)
                count += 1
                if count % 10_000 == 0 { sample() }
            }
            return sum
        }
    }

    // MARK: Helpers

    /// The entry keys of a category, from its index range.
    private func entryKeys(_ txn: OpaquePointer, category: String) throws -> [[UInt8]] {
        let prefix = Array(category.utf8) + [0]
        var keys: [[UInt8]] = []
        try scan(txn, categoryIndex, from: prefix) { key in
            guard key.count == prefix.count + 8, key.starts(with: prefix) else { return false }
            keys.append(Array(key[prefix.count...]))
            return true
        }
        return keys
    }

    private func writing<T>(_ body: (OpaquePointer) throws -> T) throws -> T {
        var txn: OpaquePointer?
        try check(mdb_txn_begin(env, nil, 0, &txn), "mdb_txn_begin")
        guard let txn else { throw BenchmarkError.raw("LMDB: no write transaction") }
        let value: T
        do {
            value = try body(txn)
        } catch {
            mdb_txn_abort(txn)
            throw error
        }
        try check(mdb_txn_commit(txn), "mdb_txn_commit")
        return value
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

    private func put(_ txn: OpaquePointer, _ dbi: MDB_dbi, _ key: [UInt8], _ value: [UInt8]) throws {
        let rc = key.withUnsafeBytes { k in
            value.withUnsafeBytes { v in
                var keyVal = MDB_val(mv_size: k.count, mv_data: UnsafeMutableRawPointer(mutating: k.baseAddress))
                var dataVal = MDB_val(mv_size: v.count, mv_data: UnsafeMutableRawPointer(mutating: v.baseAddress))
                return mdb_put(txn, dbi, &keyVal, &dataVal, 0)
            }
        }
        try check(rc, "mdb_put")
    }

    private func del(_ txn: OpaquePointer, _ dbi: MDB_dbi, _ key: [UInt8]) throws {
        let rc = key.withUnsafeBytes { k in
            var keyVal = MDB_val(mv_size: k.count, mv_data: UnsafeMutableRawPointer(mutating: k.baseAddress))
            return mdb_del(txn, dbi, &keyVal, nil)
        }
        try check(rc, "mdb_del")
    }

    /// The value under `key`, read by `body` while valid; nil when there is none.
    private func get<T>(
        _ txn: OpaquePointer, _ dbi: MDB_dbi, _ key: [UInt8], _ body: (UnsafeRawBufferPointer) -> T
    ) throws -> T? {
        var data = MDB_val()
        let rc = key.withUnsafeBytes { k in
            var keyVal = MDB_val(mv_size: k.count, mv_data: UnsafeMutableRawPointer(mutating: k.baseAddress))
            return mdb_get(txn, dbi, &keyVal, &data)
        }
        if rc == MDB_NOTFOUND { return nil }
        try check(rc, "mdb_get")
        return body(UnsafeRawBufferPointer(start: data.mv_data, count: data.mv_size))
    }

    /// Visits the keys of `dbi` from `start` in key order while `body` returns true.
    private func scan(
        _ txn: OpaquePointer, _ dbi: MDB_dbi, from start: [UInt8], _ body: (UnsafeRawBufferPointer) throws -> Bool
    ) throws {
        var cursor: OpaquePointer?
        try check(mdb_cursor_open(txn, dbi, &cursor), "mdb_cursor_open")
        defer { mdb_cursor_close(cursor) }
        var key = MDB_val()
        var data = MDB_val()
        var rc = start.withUnsafeBytes { bytes in
            key = MDB_val(mv_size: bytes.count, mv_data: UnsafeMutableRawPointer(mutating: bytes.baseAddress))
            return mdb_cursor_get(cursor, &key, &data, MDB_SET_RANGE)
        }
        while rc == 0 {
            guard try body(UnsafeRawBufferPointer(start: key.mv_data, count: key.mv_size)) else { return }
            rc = mdb_cursor_get(cursor, &key, &data, MDB_NEXT)
        }
        if rc != MDB_NOTFOUND { try check(rc, "mdb_cursor_get") }
    }

    /// Visits the value of every entry in key order.
    private func scanEntries(_ txn: OpaquePointer, _ body: (UnsafeRawBufferPointer) throws -> Void) throws {
        var cursor: OpaquePointer?
        try check(mdb_cursor_open(txn, entries, &cursor), "mdb_cursor_open")
        defer { mdb_cursor_close(cursor) }
        var key = MDB_val()
        var data = MDB_val()
        var rc = mdb_cursor_get(cursor, &key, &data, MDB_FIRST)
        while rc == 0 {
            try body(UnsafeRawBufferPointer(start: data.mv_data, count: data.mv_size))
            rc = mdb_cursor_get(cursor, &key, &data, MDB_NEXT)
        }
        if rc != MDB_NOTFOUND { try check(rc, "mdb_cursor_get") }
    }

    // MARK: Encoding

    private static func encode(
        _ externalID: Int64, _ category: String, _ amount: Int64, _ note: String, into value: inout [UInt8]
    ) {
        value.removeAll(keepingCapacity: true)
        append(externalID, to: &value)
        append(amount, to: &value)
        value.append(UInt8(category.utf8.count))
        value.append(contentsOf: category.utf8)
        value.append(contentsOf: note.utf8)
    }

    private static func decode(
        _ value: UnsafeRawBufferPointer
    ) -> (externalID: Int64, category: String, amount: Int64, note: String) {
        let length = Int(value[16])
        return (
            value.loadUnaligned(fromByteOffset: 0, as: Int64.self),
            String(decoding: UnsafeRawBufferPointer(rebasing: value[17..<(17 + length)]), as: UTF8.self),
            value.loadUnaligned(fromByteOffset: 8, as: Int64.self),
            String(decoding: UnsafeRawBufferPointer(rebasing: value[(17 + length)...]), as: UTF8.self)
        )
    }

    private static func bigEndian(_ value: Int64) -> [UInt8] {
        withUnsafeBytes(of: value.bigEndian) { Array($0) }
    }

    private static func append<T: FixedWidthInteger>(_ value: T, to out: inout [UInt8]) {
        withUnsafeBytes(of: value) { out.append(contentsOf: $0) }
    }

    private func check(_ rc: Int32, _ what: @autoclosure () -> String) throws {
        guard rc == 0 else { throw BenchmarkError.raw("LMDB: \(what()): \(String(cString: mdb_strerror(rc)))") }
    }
}
