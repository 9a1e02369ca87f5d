import StrataStorage

/// The rows a set write selects (``SetWrite/Selection``), found inside the commit's write
/// transaction before any of them changes: every key is collected first, then the caller changes
/// the rows, so no write lands while a cursor walks a database.
extension LMDBCommitter {
    /// What a selection found.
    struct Selected {
        /// The selected rows' keys, ascending and distinct.
        var keys: [Int64] = []
        /// For ``SetWrite/Selection/referencing(column:deletedBy:)``, the deleted keys that at least
        /// one selected row refers to, ascending; for a filter, the selected keys.
        var holders: [Int64] = []
    }

    /// The rows of `entity` that `selection` picks; `results` are the earlier set writes' results.
    /// - Throws: `.misuse` for a filter naming a column the entity does not have; `.storeCorrupt`
    ///   for a damaged row or index entry; LMDB errors.
    func select(
        _ selection: SetWrite.Selection, _ entity: LMDBCatalog.Entity, earlier results: [SetWriteResult]
    ) throws -> Selected {
        switch selection {
        case .matching(let filter):
            let keys = try matchingKeys(filter, entity)
            return Selected(keys: keys, holders: keys)
        case .referencing(let column, let step):
            return try referencingKeys(column, deleted: results[step].keys, entity)
        }
    }

    /// The keys of the rows matching `filter`, planned as a read plans it (``LMDBFilterPlanner``):
    /// an index range when the filter allows, else a scan; every candidate the plan cannot vouch
    /// for is checked with the reference semantics.
    private func matchingKeys(_ filter: Filter?, _ entity: LMDBCatalog.Entity) throws -> [Int64] {
        var keys: [Int64] = []
        guard let filter else {
            try txn.scan(entity.dbi) { key, _ in
                keys.append(try IndexKeyCodec.rowKey(key, entity: entity.name))
                return true
            }
            return keys
        }
        let count = entity.layout.classes.count
        try LMDBReader.checkColumns(of: filter, count: count, entity: entity.name)
        let planner = LMDBFilterPlanner(entity: entity)
        let plan = try planner.plan(filter, in: txn)
        if case .indexes(let scans) = plan, plan.isExact || planner.isExactEquality(filter, scans) {
            // Every entry of the ranges matches: the keys come from the index alone.
            for scan in scans {
                try txn.scan(scan.index.dbi, ranges: scan.ranges) { _, value in
                    keys.append(try Self.indexedKey(value, scan.index))
                    return true
                }
            }
            return LMDBFilterPlanner.sortedDistinct(keys)
        }
        if case .nothing = plan { return [] }
        // Only the filter's columns are made into values (texts and blobs of the others read as null).
        var wanted = ContiguousArray(repeating: false, count: count)
        for column in filter.columns { wanted[column] = true }
        try LMDBReader.forEachMatch(txn, entity, filter, anyOrder: true, wanted: wanted, planned: plan) { row in
            keys.append(row.key)
            return true
        }
        return LMDBFilterPlanner.sortedDistinct(keys)
    }

    /// The rows whose reference `column` holds one of `deleted`, from the column's index (every
    /// reference column has one starting with it, see ``LMDBCatalog/indexes(of:)``): one range of
    /// index keys per deleted key, walked in ascending order by one cursor.
    private func referencingKeys(
        _ column: Int, deleted: [Int64], _ entity: LMDBCatalog.Entity
    ) throws -> Selected {
        guard
            let index = entity.indexes.filter({ $0.columns.first == column }).min(by: {
                $0.columns.count < $1.columns.count
            })
        else {
            throw StrataError.misuse("entity \(entity.name) has no index on its reference column \(column)")
        }
        let targets = LMDBFilterPlanner.sortedDistinct(deleted)
        var ranges: [LMDBFilterPlanner.KeyRange] = []
        ranges.reserveCapacity(targets.count)
        var prefix: [UInt8] = []
        for target in targets {
            prefix.removeAll(keepingCapacity: true)
            IndexKeyCodec.append(.integer(target), to: &prefix)
            ranges.append(LMDBFilterPlanner.KeyRange(start: prefix, end: IndexKeyCodec.successor(ofPrefix: prefix)))
        }
        var selected = Selected()
        try txn.scan(index.dbi, ranges: ranges) { indexKey, value in
            // The entry's first component is the integer it refers to: tag, then 8 bytes big-endian
            // with the sign bit flipped (``IndexKeyCodec``); the ranges are met in ascending order.
            if let raw = IndexKeyCodec.readPrimaryKey(indexKey, at: 1) {
                let holder = Int64(bitPattern: UInt64(bitPattern: raw) ^ (1 << 63))
                if selected.holders.last != holder { selected.holders.append(holder) }
            }
            selected.keys.append(try Self.indexedKey(value, index))
            return true
        }
        selected.keys = LMDBFilterPlanner.sortedDistinct(selected.keys)
        return selected
    }

    /// The primary key an index entry's value holds.
    /// - Throws: `.storeCorrupt` for a value that is not 8 bytes.
    static func indexedKey(_ value: RawSpan, _ index: LMDBCatalog.Index) throws(StrataError) -> Int64 {
        guard value.byteCount == 8, let key = IndexKeyCodec.readPrimaryKey(value) else {
            throw .storeCorrupt("index \(index.name) holds a malformed entry")
        }
        return key
    }
}

extension LMDBFilterPlanner {
    /// Whether the index scans planned for `filter` find exactly its matches, beyond
    /// ``Plan/isExact``: the filter is one equality on a single-column index, of a value of the
    /// column's class (the planner plans no other). Index keys are self-delimiting (a text or blob
    /// ends with `00 00`), so the entries of the value's range hold that value, byte for byte,
    /// which is the filter's equality.
    func isExactEquality(_ filter: Filter, _ scans: [IndexScan]) -> Bool {
        guard case .compare(_, .equal, let value) = filter, !value.isNull, scans.count == 1,
            scans[0].index.columns.count == 1, scans[0].rank <= 1
        else { return false }
        return true
    }
}
