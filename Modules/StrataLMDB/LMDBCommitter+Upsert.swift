import StrataStorage

/// An upsert set write (``SetWrite/Upsert``): each row is looked up in its unique index and
/// inserted, or updates the stored row holding its unique values, or is ignored.
extension LMDBCommitter {
    /// Runs one upsert. A row with a null among its unique values never clashes: it is inserted.
    /// - Throws: `.constraintViolation` when another unique index clashes; `.conflict` when a
    ///   row's key is taken; `.validation` for a value its column cannot hold or an index key too
    ///   long; `.misuse`, `.storeCorrupt`, LMDB errors.
    mutating func upsert(_ upsert: SetWrite.Upsert, _ entity: LMDBCatalog.Entity, number: Int) throws -> SetWriteResult
    {
        guard let unique = entity.indexes.first(where: { $0.isUnique && $0.columns == upsert.uniqueColumns }) else {
            throw StrataError.misuse("entity \(entity.name) has no unique index on columns \(upsert.uniqueColumns)")
        }
        let (plans, columns) = Self.indexPlans(entity)
        let classes = entity.layout.classes
        var result = SetWriteResult()
        var probe: [UInt8] = []
        var row = StoredRow(key: 0, version: 0, values: [])
        var changes = ColumnChanges()
        let updated: [Int] = if case .update(let columns) = upsert.onClash { columns } else { [] }
        let plan = Self.rewritePlan(entity, columns: updated)
        var hints = AppendHints(indexCount: plans.count)
        try txn.withRowRewriter(entity.dbi) { rewriter in
            for (position, values) in upsert.rows.enumerated() {
                let key = upsert.keys[position]
                guard let owner = try owner(of: values, in: unique, entity, probe: &probe) else {
                    try insert(
                        RowWrite(entity: number, key: key, expectedVersion: 0, values: values), entity,
                        classes: classes,
                        indexes: plans, columns: columns, hints: &hints)
                    result.insertedKeys.append(key)
                    continue
                }
                guard case .update = upsert.onClash else {
                    result.ignoredCount += 1
                    continue
                }
                let written = try rewrite(
                    entity, owner, wanted: plan.wanted, indexes: plan.indexes, row: &row, changes: &changes,
                    rewriter: &rewriter
                ) { stored, changes in
                    for column in updated { changes.set(column, to: values[column], in: &stored) }
                }
                guard let written else {
                    throw StrataError.storeCorrupt("index \(unique.name) points at row \(owner), which does not exist")
                }
                guard written else {
                    result.ignoredCount += 1
                    continue
                }
                result.keys.append(owner)
            }
        }
        return result
    }

    /// The key of the stored row holding `values`' unique values in `index`, or nil when none
    /// does (or one of them is null).
    private func owner(
        of values: ContiguousArray<StoredValue>, in index: LMDBCatalog.Index, _ entity: LMDBCatalog.Entity,
        probe: inout [UInt8]
    ) throws -> Int64? {
        probe.removeAll(keepingCapacity: true)
        for column in index.columns {
            if values[column].isNull { return nil }
            IndexKeyCodec.append(values[column], to: &probe)
        }
        guard probe.count <= maxKeySize else {
            throw Self.keyTooLong(index, entity, size: probe.count, maxKeySize: maxKeySize)
        }
        return try txn.get(index.dbi, probe) { (value) throws(StrataError) in try Self.indexedKey(value, index) }
    }
}
