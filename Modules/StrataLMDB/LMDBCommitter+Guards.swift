import StrataStorage

extension LMDBCommitter {
    /// Checks a result guard (``ChangeSet/resultGuards``) inside the write transaction, before any
    /// write of the change set: the rows matching its filter are read as a fetch reads them
    /// (``LMDBReader/forEachMatch(_:_:_:anyOrder:wanted:planned:_:)`` on this transaction) and compared with the
    /// expected keys and versions; each difference is recorded as a conflict. LMDB has one writer
    /// at a time, so nothing can change the set between this check and the commit.
    mutating func check(_ guarded: ResultSetGuard) throws {
        let entity = try entity(guarded.entity)
        if let filter = guarded.filter {
            try LMDBReader.checkColumns(of: filter, count: entity.layout.classes.count, entity: entity.name)
        }
        var found: [Int64: Int64] = [:]
        found.reserveCapacity(guarded.expected.count)
        try LMDBReader.forEachMatch(txn, entity, guarded.filter, anyOrder: true) { row in
            found[row.key] = row.version
            return true
        }
        var stale = guarded.conflicts(found: found, storeIdentifier: storeIdentifier, entityName: entity.name)
        // A row that left the set but still exists changed: list its stored version.
        for index in stale.indices where stale[index].storedVersion == nil {
            guard let key = stale[index].objectID.primaryKey else { continue }
            stale[index].storedVersion = try storedRow(entity, key)?.version
        }
        conflicts += stale
    }
}
