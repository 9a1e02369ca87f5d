import StrataStorage
import Synchronization

extension SQLiteEngine {
    /// How many keys one trip to the counter table reserves at least.
    static let keyBlockSize: Int64 = 256

    func allocateKeys(entity: Int, count: Int) throws -> Range<Int64> {
        let table = try table(entity)
        guard count >= 0 else { throw StrataError.misuse("allocateKeys needs a non-negative count, got \(count)") }
        let wanted = Int64(count)
        if let keys = takeReservedKeys(entity: entity, count: wanted) { return keys }
        return try withWriter { (connection) throws(StrataError) -> Range<Int64> in
            // Another write may have refilled the block while this one waited.
            if let keys = takeReservedKeys(entity: entity, count: wanted) { return keys }
            let block = try reserveBlock(connection, table: table, size: max(wanted, Self.keyBlockSize))
            let keys = block.lowerBound..<(block.lowerBound + wanted)
            keyBlocks.withLock { $0[entity] = keys.upperBound..<block.upperBound }
            return keys
        }
    }

    /// The first `count` keys of the entity's reserved block, or nil when it holds fewer.
    private func takeReservedKeys(entity: Int, count: Int64) -> Range<Int64>? {
        keyBlocks.withLock { blocks in
            guard let block = blocks[entity], Int64(block.count) >= count else { return nil }
            let keys = block.lowerBound..<(block.lowerBound + count)
            blocks[entity] = keys.upperBound..<block.upperBound
            return keys
        }
    }

    /// Moves the entity's durable counter past a fresh block and returns the block.
    private func reserveBlock(
        _ connection: SQLiteConnection, table: SQLiteTableLayout, size: Int64
    ) throws(StrataError) -> Range<Int64> {
        try connection.execute("BEGIN IMMEDIATE")
        do throws(StrataError) {
            try checkSchemaVersion(connection)
            let keys = try Self.reserveKeys(connection, table: table, count: size)
            try connection.execute("COMMIT")
            return keys
        } catch {
            connection.rollbackQuietly()
            throw error
        }
    }

    /// Moves the entity's durable counter past `count` fresh keys and returns them, inside the
    /// write transaction open on `connection`.
    /// - Throws: `.storeFull` when the keys would pass `Int64.max`; SQLite's errors.
    static func reserveKeys(
        _ connection: SQLiteConnection, table: SQLiteTableLayout, count size: Int64
    ) throws(StrataError) -> Range<Int64> {
        let name = StoredValue.text(table.entity.name)
        let counter =
            try connection.queryInt64("SELECT next_key FROM strata_key_counters WHERE entity = ?1", [name]) ?? 1
        // Rows written without allocateKeys must not be handed out again either.
        let highest = try connection.queryInt64("SELECT max(\"id\") FROM \(table.table)") ?? 0
        // Every number here may come from the store or the caller: no step may overflow.
        guard highest < Int64.max else { throw Self.keysExhausted(table, wanted: size, next: nil) }
        let start = max(counter, highest + 1, 1)
        guard start <= Int64.max - size else { throw Self.keysExhausted(table, wanted: size, next: start) }
        let statement = try connection.statement("UPDATE strata_key_counters SET next_key = ?2 WHERE entity = ?1")
        try statement.bind(name, at: 1)
        try statement.bind(start + size, at: 2)
        try statement.run()
        return start..<(start + size)
    }

    /// The error for a key reservation that would pass `Int64.max`.
    private static func keysExhausted(_ table: SQLiteTableLayout, wanted: Int64, next: Int64?) -> StrataError {
        let remaining =
            next.map { "only \(Int64.max - $0) keys remain after \($0)" }
            ?? "a row already has the highest key, \(Int64.max)"
        return .storeFull(
            """
            \(table.entity.name) cannot reserve \(wanted) more primary keys: \(remaining). Ask for fewer keys, or \
            move the rows to a new store
            """
        )
    }
}
