import StrataStorage

extension LMDBMigration {
    /// Rewrites every row of each changed entity once, in place: checked with the store's
    /// columns (the recorded source, after renames), its values' bytes mapped by name to the new
    /// schema's columns, filled where a column is new or replaced (dropped and added again under
    /// its name) or where a null became required, and written
    /// back under the same key and version (``RowCodec/remap(_:key:plan:into:)``,
    /// which copies bytes instead of decoding values). Nothing is collected: memory stays flat
    /// whatever the number of rows.
    func rewriteRows() throws {
        for name in changed.sorted() where !added.contains(name) {
            let storedName = renamedEntities[name] ?? name
            guard let old = plan.source.entity(named: storedName),
                let new = schema.entities.first(where: { $0.name == name })
            else { throw StrataError.misuse("no entity \(name) in the migration's schemas") }
            let oldNames = old.columns.map { renamedColumns[name]?[$0] ?? $0 }
            let oldClasses = ContiguousArray(
                old.columns.map { column in
                    (old.attributes.first { $0.name == column }?.type ?? .reference).storageClass
                })
            let layout = EntityLayout(name: name, classes: oldClasses)
            // A column dropped and added again under its name is new: it takes its fill.
            let replaced = dropped[name] ?? []
            let sources = new.columns.map { column in
                replaced.contains(column.name) ? nil : oldNames.firstIndex(of: column.name)
            }
            var plan = RowRemap(layout: layout, sources: sources, fills: new.columns.map { fills[name]?[$0.name] })
            guard let dbi = try existingDatabase("e.\(name)") else { continue }
            let total = try txn.count(dbi)
            let encoded = ByteBuffer()
            var done = 0
            try txn.rewriteValues(dbi) { keyBytes, value in
                let key = try IndexKeyCodec.rowKey(keyBytes, entity: name)
                try RowCodec.remap(value, key: key, plan: &plan, into: encoded)
                done += 1
                if done % Self.progressInterval == 0 { progress.rowsMigrated(done, of: total) }
                return encoded
            }
            progress.rowsMigrated(done, of: total)
        }
    }

    /// Brings the index databases in line with the new schema: each one that is missing, that a
    /// step adds, or that covers a filled column is cleared and refilled from the rows (one scan
    /// per entity); each `i.` or `r.` database the schema no longer uses is dropped.
    /// - Throws: `constraintViolation` naming the entity and attributes when two rows clash in a
    ///   unique index; `.validation` when a value is too long to index.
    func reconcileIndexes() throws {
        let present = try databaseNames()
        let catalog = try LMDBCatalog.build(txn, meta: meta, schema: schema)
        var used: Set<String> = []
        for entity in catalog.entities {
            let filled = Set(fills[entity.name]?.keys.map { $0 } ?? [])
            let stale = entity.indexes.filter { index in
                !present.contains(index.name) || indexesToFill[entity.name]?.contains(index.name) == true
                    || index.columnNames.contains(where: filled.contains)
            }
            used.formUnion(entity.indexes.map(\.name))
            if !stale.isEmpty { try refill(stale, of: entity) }
        }
        for name in present.sorted() where (name.hasPrefix("i.") || name.hasPrefix("r.")) && !used.contains(name) {
            if let dbi = try existingDatabase(name) { try txn.drop(dbi, delete: true) }
        }
    }

    /// Empties `indexes` and adds an entry for every row of `entity`, with the committer's key
    /// encoding (values, then the key unless the index is unique and no value is null).
    private func refill(_ indexes: [LMDBCatalog.Index], of entity: LMDBCatalog.Entity) throws {
        for index in indexes { try txn.drop(index.dbi, delete: false) }
        var row = StoredRow(key: 0, version: 0, values: [])
        var indexKey: [UInt8] = []
        try txn.scan(entity.dbi) { keyBytes, value in
            let key = try IndexKeyCodec.rowKey(keyBytes, entity: entity.name)
            try RowCodec.decode(value, key: key, layout: entity.layout, into: &row)
            for index in indexes {
                try LMDBCommitter.encodeIndexKey(
                    index, entity, row.values, key, maxKeySize: maxKeySize, into: &indexKey)
                do {
                    try txn.put(index.dbi, indexKey, primaryKeyValue: key, noOverwrite: true)
                } catch LMDBError.keyExists {
                    // Only a unique index can clash: the others end their keys with the row's key.
                    let other = try txn.get(index.dbi, indexKey) { IndexKeyCodec.readPrimaryKey($0) } ?? nil
                    throw StrataError.constraintViolation(
                        entity: entity.name, attributes: index.columnNames,
                        native: MigrationUniqueClash.cause(
                            engine: "lmdb", code: LMDBError.keyExists.native("mdb_put").code, entity: entity.name,
                            attributes: index.columnNames, keys: [other, key].compactMap { $0 },
                            values: index.columns.map { row.values[$0].description }))
                }
            }
            return true
        }
    }

    /// The names of every named database in the store.
    private func databaseNames() throws -> Set<String> {
        var names: Set<String> = []
        try txn.scan(try txn.openDatabase(nil, create: false)) { key, _ in
            names.insert(String(decoding: IndexKeyCodec.array(key), as: UTF8.self))
            return true
        }
        return names
    }
}
