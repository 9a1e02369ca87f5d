import StrataStorage

extension LMDBCommitter {
    /// What an entity holds now: the bytes of its rows' pages and of each index's (in
    /// `Entity.indexes` order), and its row count.
    struct StoredSize {
        var rowBytes: Int
        var indexBytes: [Int]
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
    /// every page of its entity's rows (a tenth of the rows, scattered, is most pages) and of the
    /// indexes it changes, so it counts what `stored` says those hold now (read by the caller
    /// before the write); their history, 64 bytes per row the entity holds.
    static func estimatedBytes(
        _ changes: ChangeSet, _ catalog: LMDBCatalog, stored: [Int: StoredSize] = [:]
    ) -> Int {
        var total = 0
        for writes in [changes.inserts, changes.updates] {
            for write in writes {
                total &+= rowBytes(write.values, entity: write.entity, catalog)
            }
        }
        total &+= (changes.touches.count &+ changes.deletes.count) &* 64
        total &+= (changes.links.count &+ changes.unlinks.count) &* 2 &* 40
        total &+= changes.cursorMoves.count &* 300 // a name of up to 256 bytes and its token
        if changes.historyToAppend != nil { total &*= 2 }
        total &+= setWriteBytes(changes, catalog, stored: stored)
        return total > Int.max / 4 ? Int.max / 4 : total &* 2
    }

    /// The set writes' part of ``estimatedBytes(_:_:stored:)``.
    private static func setWriteBytes(_ changes: ChangeSet, _ catalog: LMDBCatalog, stored: [Int: StoredSize]) -> Int {
        var total = 0
        var historyRows = 0
        for write in changes.setWrites {
            guard catalog.entities.indices.contains(write.entity) else { continue }
            let indexes = catalog.entities[write.entity].indexes
            switch write.action {
            case .upsert(let upsert):
                for row in upsert.rows { total &+= rowBytes(row, entity: write.entity, catalog) }
                historyRows &+= upsert.rows.count
            case .update(let assignments):
                guard let size = stored[write.entity] else { continue }
                total &+= size.rowBytes
                for (ordinal, index) in indexes.enumerated() where ordinal < size.indexBytes.count {
                    if index.columns.contains(where: { column in assignments.contains { $0.column == column } }) {
                        total &+= size.indexBytes[ordinal]
                    }
                }
                historyRows &+= size.rows
            case .delete:
                guard let size = stored[write.entity] else { continue }
                total &+= size.rowBytes
                for bytes in size.indexBytes { total &+= bytes }
                historyRows &+= size.rows
            case .deny:
                continue
            }
        }
        if changes.history != nil { total &+= historyRows &* 64 }
        return total
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
