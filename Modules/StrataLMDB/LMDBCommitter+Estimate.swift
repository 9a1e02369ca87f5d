import StrataStorage

extension LMDBCommitter {
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
    static func estimatedBytes(_ changes: ChangeSet, _ catalog: LMDBCatalog) -> Int {
        var total = 0
        for writes in [changes.inserts, changes.updates] {
            for write in writes {
                var row = 24
                for value in write.values { row &+= encodedSize(value) }
                let indexes =
                    catalog.entities.indices.contains(write.entity)
                    ? catalog.entities[write.entity].indexes.count : 0
                total &+= row &* (1 &+ indexes)
            }
        }
        total &+= (changes.touches.count &+ changes.deletes.count) &* 64
        total &+= (changes.links.count &+ changes.unlinks.count) &* 2 &* 40
        total &+= changes.cursorMoves.count &* 300 // a name of up to 256 bytes and its token
        if changes.historyToAppend != nil { total &*= 2 }
        return total > Int.max / 4 ? Int.max / 4 : total &* 2
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
