import StrataStorage

extension LMDBCommitter {
    /// What an entity holds now: the bytes of its rows' and indexes' pages, and its row count.
    struct StoredSize {
        var bytes: Int
        var rows: Int
    }

    /// A generous estimate of the map bytes one change set adds, so that the map can grow before
    /// the write transaction instead of the transaction failing with `MDB_MAP_FULL` and running
    /// again (see ``LMDBEnvironment/write(_:reserving:_:)``).
    ///
    /// Per written row: its encoded values (text and blobs by length), an 8-byte key and LMDB's
    /// node header, once for the row and once per index entry (an index key holds at most the
    /// row's values and the primary key); per link, two pairs; the history record as much again
    /// as the rows it describes. All of it doubled, for half-full B-tree pages after splits and
    /// copy-on-write branch pages. Reads nothing from the store: a short estimate is caught by
    /// the write's `MDB_MAP_FULL` fallback, a long one costs only address space.
    ///
    /// Set writes: an upsert's rows count as inserts; an update or delete by selection may touch
    /// every page of its entity's rows and indexes, so it counts what `stored` says the entity
    /// holds now (read by the caller before the write), and a history entry per row it holds.
    static func estimatedBytes(
        _ changes: ChangeSet, _ catalog: LMDBCatalog, stored: [Int: StoredSize] = [:]
    ) -> Int {
        var total = 0
        for writes in [changes.inserts, changes.updates] {
            for write in writes {
                total &+= rowBytes(write.values, entity: write.entity, catalog)
            }
        }
        var historyRows = 0
        for write in changes.setWrites {
            switch write.action {
            case .upsert(let upsert):
                for row in upsert.rows { total &+= rowBytes(row, entity: write.entity, catalog) }
                historyRows &+= upsert.rows.count
            case .update, .delete:
                let size = stored[write.entity] ?? StoredSize(bytes: 0, rows: 0)
                total &+= size.bytes
                historyRows &+= size.rows
            case .deny:
                continue
            }
        }
        total &+= (changes.touches.count &+ changes.deletes.count) &* 64
        total &+= (changes.links.count &+ changes.unlinks.count) &* 2 &* 40
        total &+= changes.cursorMoves.count &* 300 // a name of up to 256 bytes and its token
        if changes.history != nil { total &+= historyRows &* 128 }
        if changes.historyToAppend != nil || (changes.history != nil && !changes.setWrites.isEmpty) { total &*= 2 }
        return total > Int.max / 4 ? Int.max / 4 : total &* 2
    }

    /// A row's encoded size, once for the row and once per index entry of its entity.
    private static func rowBytes(
        _ values: ContiguousArray<StoredValue>, entity: Int, _ catalog: LMDBCatalog
    ) -> Int {
        var row = 24
        for value in values { row &+= encodedSize(value) }
        let indexes = catalog.entities.indices.contains(entity) ? catalog.entities[entity].indexes.count : 0
        return row &* (1 &+ indexes)
    }

    /// An upper bound of one value's encoded size in a row or an index key.
    private static func encodedSize(_ value: StoredValue) -> Int {
        switch value {
        case .null: 1
        case .integer, .real: 9
        case .text(let text): text.utf8.count &+ 10
        case .blob(let data): data.count &+ 10
        }
    }
}
