import StrataStorage

/// Commits with set writes (``ChangeSet/setWrites``): the rows they select are found and changed
/// inside the commit's own write transaction, on the writer thread, after the change set's row
/// writes and before its history is appended (`LMDBCommitter+SetWrites.swift`).
extension LMDBEngine: SetWritingEngine {
    var acceptsSetWrites: Bool { true }

    func commitReturningResults(_ changes: ChangeSet) throws -> [SetWriteResult] {
        try checkOpen()
        if changes.isEmpty { return [] }
        let schema = schema
        try changes.checkSetWrites(against: schema)
        let catalog = catalog
        let historyDatabase = historyDatabase
        let storeIdentifier = storeIdentifier
        let maxKeySize = environment.maxKeySize
        let schemaVersion = schemaVersion
        let bytes = LMDBCommitter.estimatedBytes(changes, catalog, stored: try storedSizes(of: changes))
        return try environment.write("committing to \(environment.path)", reserving: bytes, groupable: true) { txn in
            try catalog.checkSchemaVersion(txn, schemaVersion)
            var committer = LMDBCommitter(
                txn: txn, catalog: catalog, storeIdentifier: storeIdentifier, maxKeySize: maxKeySize)
            try committer.apply(changes)
            let results = try committer.applySetWrites(changes.setWrites)
            if let record = changes.historyToAppend(adding: results, schema: schema) {
                try Self.appendHistory(txn, meta: catalog.meta, history: historyDatabase, record)
            }
            return results
        }
    }

    /// What the entities that `changes`' updates and deletes by selection act on hold now (their
    /// rows and index entries), read from a snapshot of their own: a set write may rewrite any of
    /// it, which ``LMDBCommitter/estimatedBytes(_:_:stored:)`` allows for. Empty without such writes.
    private func storedSizes(of changes: ChangeSet) throws -> [Int: LMDBCommitter.StoredSize] {
        var numbers: Set<Int> = []
        for write in changes.setWrites {
            switch write.action {
            case .update, .delete: numbers.insert(write.entity)
            case .deny, .upsert: continue
            }
        }
        guard !numbers.isEmpty else { return [:] }
        let catalog = catalog
        return try withSnapshot { txn in
            var sizes: [Int: LMDBCommitter.StoredSize] = [:]
            for number in numbers where catalog.entities.indices.contains(number) {
                let entity = catalog.entities[number]
                let rows = try txn.usage(entity.dbi)
                var indexBytes: [Int] = []
                for index in entity.indexes { indexBytes.append(try txn.usage(index.dbi).bytes) }
                sizes[number] = LMDBCommitter.StoredSize(
                    rowBytes: rows.bytes, indexBytes: indexBytes, rows: rows.entries)
            }
            return sizes
        }
    }
}
