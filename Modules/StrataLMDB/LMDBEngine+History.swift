import Foundation
import StrataStorage

/// Persistent history (issue 15, groundwork): the `strata.history` database.
///
/// Keys are the tokens as 8 big-endian bytes (``IndexKeyCodec/primaryKey(_:)``), so a cursor
/// reads in token order; values are a 4-byte big-endian CRC-32C of the rest, then the
/// ``HistoryTransaction`` as JSON. The last token handed out is `history_token` in `strata.meta`,
/// written in the same transaction as the entry, so a token is never reused, even once its
/// entry is deleted. Named cursors are `cursor.<name>` keys of `strata.meta` (8 big-endian
/// bytes each): the metadata database already exists in every store, so cursors add no database
/// for the open's and the unrecorded-store checks to count.
extension LMDBEngine: HistoryStore {
    /// The name of the history database.
    static let historyName = "strata.history"
    /// The metadata key of the last token handed out.
    static let historyTokenKey = Array("history_token".utf8)

    /// Opens the history database in the open's write transaction, creating it when missing
    /// (a store made before history). Runs after the recorded-schema check, which counts databases.
    static func openHistory(_ txn: LMDBTransaction) throws -> LMDBDatabase {
        try txn.openDatabase(historyName, create: true)
    }

    /// The last token handed out, 0 for none.
    static func lastHistoryToken(_ txn: LMDBTransaction, meta: LMDBDatabase) throws -> Int64 {
        let stored = try txn.get(meta, historyTokenKey) { bytes -> Int64? in
            bytes.byteCount == 8 ? IndexKeyCodec.readPrimaryKey(bytes) : nil
        }
        guard let stored else { return 0 }
        guard let stored else { throw StrataError.storeCorrupt("the history token in strata.meta is malformed") }
        return stored
    }

    /// Appends `record` as the next transaction, inside the commit's write transaction.
    /// - Throws: `.storeFull` when the tokens are exhausted; `.storeCorrupt`; LMDB errors.
    static func appendHistory(
        _ txn: LMDBTransaction, meta: LMDBDatabase, history: LMDBDatabase, _ record: HistoryRecord
    ) throws {
        let last = try lastHistoryToken(txn, meta: meta)
        let (token, overflow) = last.addingReportingOverflow(1)
        guard !overflow else { throw StrataError.storeFull("the history tokens are exhausted") }
        let transaction = HistoryTransaction(
            token: token, timestamp: Date(), author: record.author, changes: record.changes)
        try txn.put(history, IndexKeyCodec.primaryKey(token), try encodeHistory(transaction, keyRuns: record.keyRuns))
        try txn.put(meta, historyTokenKey, IndexKeyCodec.primaryKey(token))
    }

    /// A history value: CRC-32C of the JSON (4 bytes, big-endian), then the JSON (the record's key
    /// runs stored as ranges after its changes).
    static func encodeHistory(_ transaction: HistoryTransaction, keyRuns: [HistoryKeyRun] = []) throws -> [UInt8] {
        // By hand: JSONEncoder cost several times the rest of an insert (Docs/Benchmarks.md, 10).
        let json = try HistoryJSON.encode(transaction, keyRuns: keyRuns)
        var out: [UInt8] = []
        out.reserveCapacity(4 + json.count)
        let crc = CRC32C.checksum(json)
        for shift in stride(from: 24, through: 0, by: -8) {
            out.append(UInt8(truncatingIfNeeded: crc >> UInt32(shift)))
        }
        out += json
        return out
    }

    /// Decodes a history value written by ``encodeHistory(_:)``.
    /// - Throws: `.storeCorrupt` for a short value, a checksum mismatch or JSON that does not decode.
    static func decodeHistory(_ bytes: [UInt8], token: Int64) throws -> HistoryTransaction {
        func corrupt(_ reason: String) -> StrataError {
            .storeCorrupt("history transaction \(token) is damaged: \(reason)")
        }
        guard bytes.count >= 4 else { throw corrupt("\(bytes.count) bytes") }
        let stored = bytes[0..<4].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        let json = Array(bytes[4...])
        guard CRC32C.checksum(json) == stored else { throw corrupt("checksum mismatch") }
        do {
            return try JSONDecoder().decode(HistoryTransaction.self, from: Data(json))
        } catch {
            throw corrupt("\(error)")
        }
    }

    func currentHistoryToken() throws -> Int64 {
        let meta = catalog.meta
        return try withSnapshot { txn in try Self.lastHistoryToken(txn, meta: meta) }
    }

    func history(after token: Int64, limit: Int?) throws -> [HistoryTransaction] {
        if let limit, limit < 0 { throw StrataError.misuse("history needs a limit >= 0, got \(limit)") }
        if limit == 0 || token == .max { return [] }
        let dbi = historyDatabase
        return try withSnapshot { txn in
            var raw: [(Int64, [UInt8])] = []
            try txn.scan(dbi, from: IndexKeyCodec.primaryKey(max(token + 1, 0))) { key, value in
                raw.append((try Self.historyToken(key), IndexKeyCodec.array(value)))
                return limit.map { raw.count < $0 } ?? true
            }
            return try raw.map { try Self.decodeHistory($0.1, token: $0.0) }
        }
    }

    /// The token a key of `strata.history` holds.
    /// - Throws: `.storeCorrupt` for a key that is not 8 bytes.
    static func historyToken(_ key: RawSpan) throws(StrataError) -> Int64 {
        guard key.byteCount == 8, let token = IndexKeyCodec.readPrimaryKey(key) else {
            throw .storeCorrupt("strata.history holds a malformed key of \(key.byteCount) bytes")
        }
        return token
    }

    /// The metadata keys of cursors start with this; the byte after `.` bounds their range.
    static let cursorPrefix = Array("cursor.".utf8)
    private static let cursorRangeEnd = Array("cursor/".utf8)

    /// Every cursor in `meta`, read in `txn`.
    /// - Throws: `.storeCorrupt` for a cursor whose value is not 8 bytes or whose name is not UTF-8.
    static func readCursors(_ txn: LMDBTransaction, meta: LMDBDatabase) throws -> [String: Int64] {
        var cursors: [String: Int64] = [:]
        try txn.scan(meta, from: cursorPrefix, before: cursorRangeEnd) { key, value in
            let bytes = IndexKeyCodec.array(key).dropFirst(cursorPrefix.count)
            guard let name = String(validating: bytes, as: UTF8.self), value.byteCount == 8,
                let token = IndexKeyCodec.readPrimaryKey(value)
            else {
                throw StrataError.storeCorrupt(
                    "strata.meta holds a damaged history cursor entry (\(key.byteCount)-byte key, "
                        + "\(value.byteCount)-byte value)")
            }
            cursors[name] = token
            return true
        }
        return cursors
    }

    func historyCursors() throws -> [String: Int64] {
        let meta = catalog.meta
        return try withSnapshot { txn in try Self.readCursors(txn, meta: meta) }
    }

    func setHistoryCursor(_ name: String, to token: Int64?) throws {
        try HistoryCursor.check(name, token: token)
        try checkOpen()
        let meta = catalog.meta
        let key = Self.cursorPrefix + Array(name.utf8)
        try environment.write("moving history cursor \(String(reflecting: name)) of \(environment.path)") { txn in
            if let token {
                try txn.put(meta, key, IndexKeyCodec.primaryKey(token))
            } else {
                try txn.delete(meta, key)
            }
        }
    }

    @discardableResult
    func deleteHistory(before token: Int64, force: Bool) throws -> Int64 {
        try checkOpen()
        let meta = catalog.meta
        let dbi = historyDatabase
        return try environment.write("deleting history of \(environment.path)") { txn in
            let slowest: Int64? = if force { nil } else { try Self.readCursors(txn, meta: meta).values.min() }
            // Never past the next commit's token: the history starts there, not at a far-off bound.
            let next = try Self.lastHistoryToken(txn, meta: meta).addingReportingOverflow(1)
            let bound = HistoryCursor.trimmingBound(
                next.overflow ? token : min(token, next.partialValue), force: force, slowestCursor: slowest)
            // Tokens start at 1; a bound of 1 or less deletes nothing (and a negative one would
            // not sort below the positive keys).
            if bound > 1 { try txn.deleteLeading(dbi, before: IndexKeyCodec.primaryKey(bound)) }
            return bound
        }
    }
}
