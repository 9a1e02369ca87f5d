import CLMDB
import Foundation

/// One database (a B-tree) of an open LMDB environment, as
/// ``LMDBTransaction/openDatabase(_:create:)`` gave it: the rest of the engine names databases
/// by this value and never sees LMDB's `MDB_dbi`, which only this file reads.
///
/// ```swift
/// let entries = try txn.openDatabase("Entry", create: true)
/// try txn.put(entries, primaryKey: 1, [0x01])
/// ```
struct LMDBDatabase: Hashable, Sendable {
    fileprivate let handle: MDB_dbi
}

/// A thin, non-owning view of an `MDB_txn`: get, put, delete, ordered scans and opening named
/// databases.
///
/// Walled file (strict memory safety): the `MDB_txn` pointer and every `MDB_val` stay in here.
/// Values handed to closures point into the memory map; they arrive as `RawSpan`s, which the
/// compiler keeps inside the closure, so no caller can hold on to map memory.
///
/// Lifetime rule: a transaction is valid between its begin and its commit or abort
/// (``LMDBEnvironment`` does both); the bytes a closure receives are valid inside it only.
@safe struct LMDBTransaction {
    private let raw: OpaquePointer

    /// Wraps a begun transaction; ``LMDBEnvironment`` is the only caller.
    @unsafe init(raw: OpaquePointer) { unsafe self.raw = raw }

    /// The transaction pointer, for ``LMDBEnvironment`` to commit, reset or abort.
    @unsafe var pointer: OpaquePointer { unsafe raw }

    /// The ID of the transaction: for a read, that of the snapshot it reads (`mdb_txn_id`).
    var id: UInt64 { UInt64(unsafe mdb_txn_id(raw)) }

    /// Calls `body` with the value stored under `key`, or returns nil when there is none.
    func get<T>(_ dbi: LMDBDatabase, _ key: [UInt8], _ body: (RawSpan) throws -> T) throws -> T? {
        try unsafe key.withUnsafeBytes { try unsafe get(dbi, bytes: $0, body) }
    }

    /// ``get(_:_:_:)`` for an 8-byte big-endian primary key, without building the key on the heap.
    @inline(__always)
    func get<T>(_ dbi: LMDBDatabase, primaryKey: Int64, _ body: (RawSpan) throws -> T) throws -> T? {
        try unsafe withUnsafeBytes(of: primaryKey.bigEndian) { try unsafe get(dbi, bytes: $0, body) }
    }

    @unsafe @inline(__always)
    private func get<T>(
        _ dbi: LMDBDatabase, bytes key: UnsafeRawBufferPointer, _ body: (RawSpan) throws -> T
    ) throws -> T? {
        var data = unsafe MDB_val()
        var k = unsafe MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        let rc = unsafe mdb_get(raw, dbi.handle, &k, &data)
        if rc == MDB_NOTFOUND { return nil }
        try lmdbCheck(rc)
        let value = unsafe RawSpan(_unsafeBytes: UnsafeRawBufferPointer(start: data.mv_data, count: data.mv_size))
        return try body(value)
    }

    /// Stores `value` under `key`.
    /// - Parameter noOverwrite: fail with `LMDBError.keyExists` when the key is present.
    func put(_ dbi: LMDBDatabase, _ key: [UInt8], _ value: [UInt8], noOverwrite: Bool = false) throws(LMDBError) {
        let rc = unsafe key.withUnsafeBytes { keyBytes in
            unsafe value.withUnsafeBytes { unsafe put(dbi, bytes: keyBytes, $0, noOverwrite: noOverwrite) }
        }
        try lmdbCheck(rc)
    }

    /// ``put(_:_:_:noOverwrite:)`` under an 8-byte big-endian primary key.
    func put(_ dbi: LMDBDatabase, primaryKey: Int64, _ value: [UInt8], noOverwrite: Bool = false) throws(LMDBError) {
        let rc = unsafe withUnsafeBytes(of: primaryKey.bigEndian) { keyBytes in
            unsafe value.withUnsafeBytes { unsafe put(dbi, bytes: keyBytes, $0, noOverwrite: noOverwrite) }
        }
        try lmdbCheck(rc)
    }

    /// ``put(_:_:_:noOverwrite:)`` with an 8-byte big-endian primary key as the value.
    func put(_ dbi: LMDBDatabase, _ key: [UInt8], primaryKeyValue: Int64, noOverwrite: Bool = false) throws(LMDBError) {
        let rc = unsafe key.withUnsafeBytes { keyBytes in
            unsafe withUnsafeBytes(of: primaryKeyValue.bigEndian) {
                unsafe put(dbi, bytes: keyBytes, $0, noOverwrite: noOverwrite)
            }
        }
        try lmdbCheck(rc)
    }

    /// ``put(_:_:_:noOverwrite:)`` of the bytes of `value` under an 8-byte big-endian primary key.
    @inline(__always)
    func put(
        _ dbi: LMDBDatabase, primaryKey: Int64, buffer value: ByteBuffer, noOverwrite: Bool = false
    ) throws(LMDBError) {
        let rc = unsafe withUnsafeBytes(of: primaryKey.bigEndian) {
            unsafe put(dbi, bytes: $0, value.bytes, noOverwrite: noOverwrite)
        }
        try lmdbCheck(rc)
    }

    /// ``put(_:_:primaryKeyValue:noOverwrite:)`` with the bytes of `key` as the key.
    @inline(__always)
    func put(_ dbi: LMDBDatabase, key: ByteBuffer, primaryKeyValue: Int64, noOverwrite: Bool = false) throws(LMDBError)
    {
        let rc = unsafe withUnsafeBytes(of: primaryKeyValue.bigEndian) {
            unsafe put(dbi, bytes: key.bytes, $0, noOverwrite: noOverwrite)
        }
        try lmdbCheck(rc)
    }

    @unsafe @inline(__always)
    private func put(
        _ dbi: LMDBDatabase, bytes key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer, noOverwrite: Bool
    ) -> Int32 {
        unsafe put(dbi, bytes: key, value, flags: noOverwrite ? UInt32(MDB_NOOVERWRITE) : 0)
    }

    /// `mdb_put` of `key` and `value` with `flags`; returns LMDB's result code.
    @unsafe @inline(__always)
    private func put(
        _ dbi: LMDBDatabase, bytes key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer, flags: UInt32
    ) -> Int32 {
        var k = unsafe MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
        var v = unsafe MDB_val(mv_size: value.count, mv_data: UnsafeMutableRawPointer(mutating: value.baseAddress))
        return unsafe mdb_put(raw, dbi.handle, &k, &v, flags)
    }

    /// Adds a new entry under an 8-byte big-endian primary key, never over one, first as an
    /// append when `append` is set (see ``putNew(_:bytes:_:append:)``).
    /// - Returns: whether it went in as an append.
    /// - Throws: `.keyExists` when the key is taken; LMDB's other errors.
    @inline(__always)
    func putNew(
        _ dbi: LMDBDatabase, primaryKey: Int64, buffer value: ByteBuffer, append: Bool
    ) throws(LMDBError)
        -> Bool
    {
        let (rc, appended) = unsafe withUnsafeBytes(of: primaryKey.bigEndian) {
            unsafe putNew(dbi, bytes: $0, value.bytes, append: append)
        }
        try lmdbCheck(rc)
        return appended
    }

    /// Adds a new entry with the bytes of `key` as its key and an 8-byte big-endian primary key
    /// as its value, never over one, first as an append when `append` is set.
    /// - Returns: whether it went in as an append.
    /// - Throws: `.keyExists` when the key is taken; LMDB's other errors.
    @inline(__always)
    func putNew(_ dbi: LMDBDatabase, key: ByteBuffer, primaryKeyValue: Int64, append: Bool) throws(LMDBError) -> Bool {
        let (rc, appended) = unsafe withUnsafeBytes(of: primaryKeyValue.bigEndian) {
            unsafe putNew(dbi, bytes: key.bytes, $0, append: append)
        }
        try lmdbCheck(rc)
        return appended
    }

    /// A put that never overwrites. With `append`, it is first tried as `MDB_APPEND`: LMDB then
    /// goes straight to the last page instead of searching, and when that page is full starts the
    /// next one instead of splitting it in half, so entries added in key order (new primary keys,
    /// which come from a counter) fill their pages instead of leaving them half empty. A key that
    /// is not past the database's last one makes LMDB refuse the append with `MDB_KEYEXIST`
    /// before it changes anything (the transaction stays usable); the entry is then put the
    /// ordinary way, which alone tells whether the key is really taken.
    @unsafe @inline(__always)
    private func putNew(
        _ dbi: LMDBDatabase, bytes key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer, append: Bool
    ) -> (rc: Int32, appended: Bool) {
        if append {
            let rc = unsafe put(dbi, bytes: key, value, flags: UInt32(MDB_APPEND | MDB_NOOVERWRITE))
            if rc != MDB_KEYEXIST { return (rc, rc == 0) }
        }
        return (unsafe put(dbi, bytes: key, value, flags: UInt32(MDB_NOOVERWRITE)), false)
    }

    /// Deletes `key`; returns false when it was not there.
    @discardableResult
    func delete(_ dbi: LMDBDatabase, _ key: [UInt8]) throws(LMDBError) -> Bool {
        let rc = unsafe key.withUnsafeBytes { keyBytes in
            var k = unsafe MDB_val(
                mv_size: keyBytes.count, mv_data: UnsafeMutableRawPointer(mutating: keyBytes.baseAddress))
            return unsafe mdb_del(raw, dbi.handle, &k, nil)
        }
        if rc == MDB_NOTFOUND { return false }
        try lmdbCheck(rc)
        return true
    }

    /// ``delete(_:_:)`` of the bytes of `key`.
    @discardableResult
    func delete(_ dbi: LMDBDatabase, key: ByteBuffer) throws(LMDBError) -> Bool {
        try unsafe delete(dbi, bytes: key.bytes)
    }

    /// ``delete(_:_:)`` of an 8-byte big-endian primary key, without building the key on the heap.
    @discardableResult
    func delete(_ dbi: LMDBDatabase, primaryKey: Int64) throws(LMDBError) -> Bool {
        try unsafe withUnsafeBytes(of: primaryKey.bigEndian) { (bytes) throws(LMDBError) in
            try unsafe delete(dbi, bytes: bytes)
        }
    }

    @unsafe
    private func delete(_ dbi: LMDBDatabase, bytes: UnsafeRawBufferPointer) throws(LMDBError) -> Bool {
        var k = unsafe MDB_val(mv_size: bytes.count, mv_data: UnsafeMutableRawPointer(mutating: bytes.baseAddress))
        let rc = unsafe mdb_del(raw, dbi.handle, &k, nil)
        if rc == MDB_NOTFOUND { return false }
        try lmdbCheck(rc)
        return true
    }

    /// Visits entries in key order from `start` (or the first key) while keys are below `end`.
    /// `body` returns false to stop early.
    func scan(
        _ dbi: LMDBDatabase, from start: [UInt8]? = nil, before end: [UInt8]? = nil,
        _ body: (_ key: RawSpan, _ value: RawSpan) throws -> Bool
    ) throws {
        var cursor: OpaquePointer?
        try unsafe lmdbCheck(mdb_cursor_open(raw, dbi.handle, &cursor))
        defer { unsafe mdb_cursor_close(cursor) }
        var key = unsafe MDB_val()
        var data = unsafe MDB_val()
        var rc: Int32
        if let start {
            rc = unsafe Self.seek(cursor, to: start, &key, &data)
        } else {
            rc = unsafe mdb_cursor_get(cursor, &key, &data, MDB_FIRST)
        }
        while rc == 0 {
            let keyBytes = unsafe UnsafeRawBufferPointer(start: key.mv_data, count: key.mv_size)
            if let end, unsafe Self.compare(keyBytes, end) >= 0 { return }
            let keySpan = unsafe RawSpan(_unsafeBytes: keyBytes)
            let valueSpan = unsafe RawSpan(
                _unsafeBytes: UnsafeRawBufferPointer(start: data.mv_data, count: data.mv_size))
            if try !body(keySpan, valueSpan) { return }
            rc = unsafe mdb_cursor_get(cursor, &key, &data, MDB_NEXT)
        }
        if rc != MDB_NOTFOUND { try lmdbCheck(rc) }
    }

    /// ``scan(_:from:before:_:)`` over several ranges with one cursor: for each range in order,
    /// the entries from its start while keys are below its end. `body` returns false to stop.
    /// Ranges in ascending order make this one forward pass over the database.
    func scan(
        _ dbi: LMDBDatabase, ranges: [LMDBFilterPlanner.KeyRange],
        _ body: (_ key: RawSpan, _ value: RawSpan) throws -> Bool
    ) throws {
        guard !ranges.isEmpty else { return }
        var cursor: OpaquePointer?
        try unsafe lmdbCheck(mdb_cursor_open(raw, dbi.handle, &cursor))
        defer { unsafe mdb_cursor_close(cursor) }
        var key = unsafe MDB_val()
        var data = unsafe MDB_val()
        for range in ranges {
            var rc = unsafe Self.seek(cursor, to: range.start, &key, &data)
            while rc == 0 {
                let keyBytes = unsafe UnsafeRawBufferPointer(start: key.mv_data, count: key.mv_size)
                if let end = range.end, unsafe Self.compare(keyBytes, end) >= 0 { break }
                let keySpan = unsafe RawSpan(_unsafeBytes: keyBytes)
                let valueSpan = unsafe RawSpan(
                    _unsafeBytes: UnsafeRawBufferPointer(start: data.mv_data, count: data.mv_size))
                if try !body(keySpan, valueSpan) { return }
                rc = unsafe mdb_cursor_get(cursor, &key, &data, MDB_NEXT)
            }
            if rc != 0 && rc != MDB_NOTFOUND { try lmdbCheck(rc) }
        }
    }

    /// Which of several sets of key ranges holds the fewest entries, found by stepping one cursor
    /// per set in turn, one entry at a time, until a set runs out: its position in `sets` (the
    /// earlier set on a tie), or nil when every set holds at least `limit` entries. Reads at most
    /// `limit` entries of each set, and only as many of each as the smallest set holds. Each
    /// set's ranges must be in ascending order, as ``scan(_:ranges:_:)`` walks them.
    func fewestEntries(
        _ sets: [(dbi: LMDBDatabase, ranges: [LMDBFilterPlanner.KeyRange])], limit: Int
    ) throws(LMDBError) -> Int? {
        var cursors: [OpaquePointer?] = unsafe []
        defer { for index in unsafe cursors.indices { unsafe mdb_cursor_close(cursors[index]) } }
        for set in sets {
            var cursor: OpaquePointer?
            try unsafe lmdbCheck(mdb_cursor_open(raw, set.dbi.handle, &cursor))
            unsafe cursors.append(cursor)
        }
        // Per set: the range its cursor is in, and whether the cursor is on an entry of it.
        var rangeIndex = [Int](repeating: 0, count: sets.count)
        var positioned = [Bool](repeating: false, count: sets.count)
        var key = unsafe MDB_val()
        var data = unsafe MDB_val()
        for _ in 0..<max(limit, 0) {
            for (position, set) in sets.enumerated() {
                // Steps this set's cursor to its next entry in range; false when there is none.
                var found = false
                while rangeIndex[position] < set.ranges.count {
                    let range = set.ranges[rangeIndex[position]]
                    let rc =
                        positioned[position]
                        ? unsafe mdb_cursor_get(cursors[position], &key, &data, MDB_NEXT)
                        : unsafe Self.seek(cursors[position], to: range.start, &key, &data)
                    if rc == MDB_NOTFOUND { break }
                    try lmdbCheck(rc)
                    let keyBytes = unsafe UnsafeRawBufferPointer(start: key.mv_data, count: key.mv_size)
                    if let end = range.end, unsafe Self.compare(keyBytes, end) >= 0 {
                        rangeIndex[position] += 1
                        positioned[position] = false
                        continue
                    }
                    positioned[position] = true
                    found = true
                    break
                }
                if !found { return position }
            }
        }
        return nil
    }

    /// Puts `cursor` on the first entry at or after `start` (`MDB_SET_RANGE`), its key and value
    /// in `key` and `data`; returns LMDB's result code.
    @unsafe @inline(__always)
    private static func seek(
        _ cursor: OpaquePointer?, to start: [UInt8], _ key: inout MDB_val, _ data: inout MDB_val
    ) -> Int32 {
        unsafe start.withUnsafeBytes { startBytes in
            unsafe key = MDB_val(
                mv_size: startBytes.count, mv_data: UnsafeMutableRawPointer(mutating: startBytes.baseAddress))
            return unsafe mdb_cursor_get(cursor, &key, &data, MDB_SET_RANGE)
        }
    }

    /// Deletes the entries from the first one up to (not including) the first key at or after
    /// `end`, walking one cursor (`mdb_cursor_del`, then `MDB_NEXT`, which after a delete lands on
    /// the entry that followed), without collecting keys. Returns how many it deleted.
    @discardableResult
    func deleteLeading(_ dbi: LMDBDatabase, before end: [UInt8]) throws(LMDBError) -> Int {
        var cursor: OpaquePointer?
        try unsafe lmdbCheck(mdb_cursor_open(raw, dbi.handle, &cursor))
        defer { unsafe mdb_cursor_close(cursor) }
        var key = unsafe MDB_val()
        var data = unsafe MDB_val()
        var deleted = 0
        var rc = unsafe mdb_cursor_get(cursor, &key, &data, MDB_FIRST)
        while rc == 0 {
            let keyBytes = unsafe UnsafeRawBufferPointer(start: key.mv_data, count: key.mv_size)
            if unsafe Self.compare(keyBytes, end) >= 0 { return deleted }
            try unsafe lmdbCheck(mdb_cursor_del(cursor, 0))
            deleted += 1
            rc = unsafe mdb_cursor_get(cursor, &key, &data, MDB_NEXT)
        }
        if rc != MDB_NOTFOUND { try lmdbCheck(rc) }
        return deleted
    }

    /// The last key of a database, if any.
    func lastKey<T>(_ dbi: LMDBDatabase, _ body: (RawSpan) -> T) throws -> T? {
        var cursor: OpaquePointer?
        try unsafe lmdbCheck(mdb_cursor_open(raw, dbi.handle, &cursor))
        defer { unsafe mdb_cursor_close(cursor) }
        var key = unsafe MDB_val()
        var data = unsafe MDB_val()
        let rc = unsafe mdb_cursor_get(cursor, &key, &data, MDB_LAST)
        if rc == MDB_NOTFOUND { return nil }
        try lmdbCheck(rc)
        return body(unsafe RawSpan(_unsafeBytes: UnsafeRawBufferPointer(start: key.mv_data, count: key.mv_size)))
    }

    /// How many entries a database holds.
    func count(_ dbi: LMDBDatabase) throws(LMDBError) -> Int {
        var stat = MDB_stat()
        try unsafe lmdbCheck(mdb_stat(raw, dbi.handle, &stat))
        return stat.ms_entries
    }

    /// The bytes a database's pages take (branch, leaf and overflow pages times the page size)
    /// and how many entries it holds, from one `mdb_stat`.
    func usage(_ dbi: LMDBDatabase) throws(LMDBError) -> (bytes: Int, entries: Int) {
        var stat = MDB_stat()
        try unsafe lmdbCheck(mdb_stat(raw, dbi.handle, &stat))
        let pages = stat.ms_branch_pages &+ stat.ms_leaf_pages &+ stat.ms_overflow_pages
        return (pages &* Int(stat.ms_psize), stat.ms_entries)
    }

    /// Runs `body` in a transaction nested in this write transaction (`mdb_txn_begin` with this
    /// one as parent): its writes join this transaction when `body` returns, and are undone,
    /// leaving this transaction as it was, when `body` throws. This transaction must not be
    /// used while `body` runs.
    func nested<T>(_ body: (LMDBTransaction) throws -> T) throws -> T {
        var child: OpaquePointer?
        try unsafe lmdbCheck(mdb_txn_begin(mdb_txn_env(raw), raw, 0, &child))
        guard let child = unsafe child else { throw LMDBError.badTransaction }
        let value: T
        do {
            value = try body(unsafe LMDBTransaction(raw: child))
        } catch {
            unsafe mdb_txn_abort(child)
            throw error
        }
        try unsafe lmdbCheck(mdb_txn_commit(child))
        return value
    }

    /// Empties a database (`mdb_drop`); with `delete`, also removes it from the environment and
    /// closes its handle.
    func drop(_ dbi: LMDBDatabase, delete: Bool) throws(LMDBError) {
        try unsafe lmdbCheck(mdb_drop(raw, dbi.handle, delete ? 1 : 0))
    }

    /// Visits every entry in key order and replaces the value of each one for which `body`
    /// returns bytes, in place (`mdb_cursor_put` with `MDB_CURRENT`: same key, no second lookup).
    /// `body` returns nil to keep an entry as it is; the bytes it returns are copied at once.
    func rewriteValues(_ dbi: LMDBDatabase, _ body: (_ key: RawSpan, _ value: RawSpan) throws -> ByteBuffer?) throws {
        var cursor: OpaquePointer?
        try unsafe lmdbCheck(mdb_cursor_open(raw, dbi.handle, &cursor))
        defer { unsafe mdb_cursor_close(cursor) }
        var key = unsafe MDB_val()
        var data = unsafe MDB_val()
        let keyCopy = ByteBuffer()
        var rc = unsafe mdb_cursor_get(cursor, &key, &data, MDB_FIRST)
        while rc == 0 {
            let keySpan = unsafe RawSpan(_unsafeBytes: UnsafeRawBufferPointer(start: key.mv_data, count: key.mv_size))
            let valueSpan = unsafe RawSpan(
                _unsafeBytes: UnsafeRawBufferPointer(start: data.mv_data, count: data.mv_size))
            if let replacement = try body(keySpan, valueSpan) {
                // The key is copied first: a value of another size is replaced by a delete and an
                // insert, which moves the page bytes `key` points into.
                keyCopy.reset()
                unsafe keyCopy.append(UnsafeRawBufferPointer(start: key.mv_data, count: key.mv_size))
                let put = withExtendedLifetime(keyCopy) {
                    unsafe Self.replaceCurrent(cursor, key: keyCopy.bytes, with: replacement)
                }
                try lmdbCheck(put)
            }
            rc = unsafe mdb_cursor_get(cursor, &key, &data, MDB_NEXT)
        }
        if rc != MDB_NOTFOUND { try lmdbCheck(rc) }
    }

    /// Calls `body` with a ``LMDBRowRewriter`` on `dbi`: one cursor for many point rewrites,
    /// closed when `body` returns (inside the transaction, as LMDB requires).
    func withRowRewriter<T>(_ dbi: LMDBDatabase, _ body: (inout LMDBRowRewriter) throws -> T) throws -> T {
        var cursor: OpaquePointer?
        try unsafe lmdbCheck(mdb_cursor_open(raw, dbi.handle, &cursor))
        var rewriter = unsafe LMDBRowRewriter(cursor: cursor)
        defer { unsafe mdb_cursor_close(cursor) }
        return try body(&rewriter)
    }

    /// Copies every entry of `source` into the empty database `target`, in key order
    /// (`MDB_APPEND`); returns how many it copied. `progress` is called with the count so far
    /// every `every` entries.
    @discardableResult
    func copyAll(
        _ source: LMDBDatabase, to target: LMDBDatabase, every: Int = 5_000, progress: (Int) -> Void = { _ in }
    ) throws -> Int {
        var reading: OpaquePointer?
        try unsafe lmdbCheck(mdb_cursor_open(raw, source.handle, &reading))
        defer { unsafe mdb_cursor_close(reading) }
        var key = unsafe MDB_val()
        var data = unsafe MDB_val()
        var copied = 0
        var rc = unsafe mdb_cursor_get(reading, &key, &data, MDB_FIRST)
        while rc == 0 {
            try unsafe lmdbCheck(mdb_put(raw, target.handle, &key, &data, UInt32(MDB_APPEND)))
            copied += 1
            if copied % every == 0 { progress(copied) }
            rc = unsafe mdb_cursor_get(reading, &key, &data, MDB_NEXT)
        }
        if rc != MDB_NOTFOUND { try lmdbCheck(rc) }
        return copied
    }

    /// Opens a named database (`nil`: the main one), creating it when `create` is set.
    /// - Throws: `LMDBError.notFound` when it does not exist and `create` is not set;
    ///   `.incompatible` when the name belongs to something that is not a database; others.
    func openDatabase(_ name: String?, create: Bool) throws(LMDBError) -> LMDBDatabase {
        var dbi: MDB_dbi = 0
        let flags = create ? UInt32(MDB_CREATE) : 0
        if let name {
            try unsafe lmdbCheck(mdb_dbi_open(raw, name, flags, &dbi))
        } else {
            try unsafe lmdbCheck(mdb_dbi_open(raw, nil, flags, &dbi))
        }
        return LMDBDatabase(handle: dbi)
    }

    /// Bytewise comparison, shorter first on a common prefix.
    @unsafe
    static func compare(_ a: UnsafeRawBufferPointer, _ b: [UInt8]) -> Int {
        unsafe b.withUnsafeBytes { bb in
            let common = min(a.count, bb.count)
            if common > 0, let pa = a.baseAddress, let pb = bb.baseAddress {
                let r = unsafe memcmp(pa, pb, common)
                if r != 0 { return Int(r) }
            }
            return a.count - bb.count
        }
    }
}

extension LMDBTransaction {
    /// Replaces the value at `cursor`'s position with `replacement` (`mdb_cursor_put` with
    /// `MDB_CURRENT`); `key` must be the entry's key in memory of the caller's, not the page's: a
    /// value of another size is replaced by a delete and an insert, which moves the page's bytes.
    /// Returns LMDB's result code.
    @unsafe @inline(__always)
    fileprivate static func replaceCurrent(
        _ cursor: OpaquePointer?, key: UnsafeRawBufferPointer, with replacement: ByteBuffer
    ) -> Int32 {
        withExtendedLifetime(replacement) {
            let bytes = unsafe replacement.bytes
            var keyValue = unsafe MDB_val(
                mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
            var value = unsafe MDB_val(
                mv_size: bytes.count, mv_data: UnsafeMutableRawPointer(mutating: bytes.baseAddress))
            return unsafe mdb_cursor_put(cursor, &keyValue, &value, UInt32(MDB_CURRENT))
        }
    }
}

/// LMDB's text for a result code (`mdb_strerror`, which also knows errno values).
func lmdbMessage(_ code: Int32) -> String {
    unsafe String(cString: mdb_strerror(code))
}

/// Rewrites rows under their 8-byte primary keys with one search each: the cursor finds the row
/// (`MDB_SET_KEY`) and replaces its value where it stands (`mdb_cursor_put` with `MDB_CURRENT`),
/// where a get and a put would search the B-tree twice.
///
/// Lifetime rule: only ``LMDBTransaction/withRowRewriter(_:_:)`` makes one, and lends it to its
/// closure; it cannot be copied out (`~Copyable`), so its cursor is never used after it closes.
///
/// ```swift
/// try txn.withRowRewriter(entity.dbi) { rewriter in
///     _ = try rewriter.rewrite(primaryKey: 7) { stored in changed(stored) }
/// }
/// ```
@safe struct LMDBRowRewriter: ~Copyable {
    private let cursor: OpaquePointer?

    @unsafe fileprivate init(cursor: OpaquePointer?) { unsafe self.cursor = cursor }

    /// Calls `body` with the value stored under `primaryKey`; when it returns bytes, they
    /// replace the value (copied at once; the stored bytes `body` saw are not valid after).
    /// - Returns: nil when there is no such key; otherwise whether the value was replaced.
    /// - Throws: what `body` throws; LMDB's errors (the transaction is then unusable).
    mutating func rewrite(primaryKey: Int64, _ body: (RawSpan) throws -> ByteBuffer?) throws -> Bool? {
        var stableKey = primaryKey.bigEndian
        return try unsafe withUnsafeMutableBytes(of: &stableKey) { keyBytes in
            var key = unsafe MDB_val(mv_size: keyBytes.count, mv_data: keyBytes.baseAddress)
            var data = unsafe MDB_val()
            let found = unsafe mdb_cursor_get(cursor, &key, &data, MDB_SET_KEY)
            if found == MDB_NOTFOUND { return nil }
            try lmdbCheck(found)
            let stored = unsafe RawSpan(_unsafeBytes: UnsafeRawBufferPointer(start: data.mv_data, count: data.mv_size))
            guard let replacement = try body(stored) else { return false }
            // The key given back is the caller's copy, not the page's (MDB_SET_KEY pointed `key`
            // at the page).
            try lmdbCheck(
                unsafe LMDBTransaction.replaceCurrent(cursor, key: UnsafeRawBufferPointer(keyBytes), with: replacement))
            return true
        }
    }
}
