import StrataStorage
import Synchronization

/// Keys (design notes §8): blocks of at least 256 reserved by one `UPDATE … RETURNING`
/// of the entity's counter row in `strata_key_counters`, handed out in process.
extension PostgresEngine {
    static let keyBlockSize: Int64 = 256

    func allocateKeys(entity: Int, count: Int) throws -> Range<Int64> {
        let table = try table(entity)
        guard count >= 0 else { throw StrataError.misuse("allocateKeys needs a non-negative count, got \(count)") }
        guard !pool.isClosed else {
            throw PostgresError.closed(location)
        }
        let wanted = Int64(count)
        if let keys = takeReservedKeys(entity: entity, count: wanted) { return keys }
        let size = max(wanted, Self.keyBlockSize)
        // A store another process migrated may have renamed or dropped this entity's counter;
        // the schema-version check, with the open lock held, holds off a migration until the
        // counter is moved.
        let block = try withTransaction(checkingSchemaVersion: true, retrySafe: true) {
            (session) throws(StrataError) -> Range<Int64> in
            try reserveKeys(session, table: table, count: size)
        }
        let keys = block.lowerBound..<(block.lowerBound + wanted)
        keyBlocks.withLock { blocks in
            // Keep the larger remainder: another thread may have refilled the block meanwhile.
            let rest = keys.upperBound..<block.upperBound
            if let current = blocks[entity], current.count >= rest.count { return }
            blocks[entity] = rest
        }
        return keys
    }

    private func takeReservedKeys(entity: Int, count: Int64) -> Range<Int64>? {
        keyBlocks.withLock { blocks in
            guard let block = blocks[entity], Int64(block.count) >= count else { return nil }
            let keys = block.lowerBound..<(block.lowerBound + count)
            blocks[entity] = keys.upperBound..<block.upperBound
            return keys
        }
    }

    /// Moves the entity's durable counter past `size` keys (and past every stored key) and returns them.
    /// - Throws: `.storeFull` when the keys would pass `Int64.max`.
    func reserveKeys(
        _ session: PostgresSession, table: PostgresTableLayout, count size: Int64
    ) throws(StrataError) -> Range<Int64> {
        let sql = """
            UPDATE \(names.keyCounters) AS k \
            SET next_key = greatest(k.next_key, (SELECT coalesce(max("id"), 0) + 1 FROM \(table.table)), 1) + $2 \
            WHERE k.entity = $1 \
            AND greatest(k.next_key, (SELECT coalesce(max("id"), 0) + 1 FROM \(table.table)), 1) <= $3 \
            RETURNING k.next_key - $2
            """
        let result: PGResult
        do throws(PGFailure) {
            result = try session.runRaw(sql, [.rawText(table.entity.name), .int8(size), .int8(Int64.max - size)])
        } catch {
            // max(id) + 1 overflows when a row holds Int64.max.
            if error.sqlState == "22003" { throw Self.keysExhausted(table, wanted: size) }
            throw session.error(error, sql: sql)
        }
        guard result.rowCount == 1, let start = result.int64(0, 0) else {
            let exists = try session.int64(
                "SELECT 1 FROM \(names.keyCounters) WHERE entity = $1", [.rawText(table.entity.name)])
            if exists == nil {
                throw .storeCorrupt("\(location): strata_key_counters has no row for entity \(table.entity.name)")
            }
            throw Self.keysExhausted(table, wanted: size)
        }
        return start..<(start + size)
    }

    private static func keysExhausted(_ table: PostgresTableLayout, wanted: Int64) -> StrataError {
        .storeFull(
            """
            \(table.entity.name) cannot reserve \(wanted) more primary keys: too few remain below \(Int64.max). Ask \
            for \
            fewer keys, or move the rows to a new store
            """)
    }
}
