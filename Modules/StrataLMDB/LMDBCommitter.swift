import Foundation
import StrataStorage

/// Applies one `ChangeSet` inside a write transaction: deletes, unlinks, updates, touches,
/// inserts, links, keeping every index and join database in step.
///
/// Version mismatches are collected (not thrown at the first one) so that the thrown
/// `.conflict` lists all of them; a unique-index violation is reported when there is no
/// conflict. Either way the caller aborts the transaction, so nothing is written.
struct LMDBCommitter {
    let txn: LMDBTransaction
    let catalog: LMDBCatalog
    let storeIdentifier: UUID
    let maxKeySize: Int
    var conflicts: [VersionConflict] = []
    var violation: StrataError?
    /// Reused for every encoded row and index key of the change set.
    let rowBytes = ByteBuffer()
    let keyBytes = ByteBuffer()

    init(txn: LMDBTransaction, catalog: LMDBCatalog, storeIdentifier: UUID, maxKeySize: Int) {
        self.txn = txn
        self.catalog = catalog
        self.storeIdentifier = storeIdentifier
        self.maxKeySize = maxKeySize
    }

    mutating func apply(_ changes: ChangeSet) throws {
        for guarded in changes.resultGuards { try check(guarded) }
        for check in changes.verifies { try verify(check) }
        for check in changes.deletes { try delete(check) }
        for link in changes.unlinks { try unlink(link) }
        for write in changes.updates { try update(write) }
        for check in changes.touches { try touch(check) }
        try insertAll(changes.inserts)
        for link in changes.links { try self.link(link) }
        try moveHistoryCursors(of: changes)
        if !conflicts.isEmpty { throw StrataError.conflict(conflicts) }
        if let violation { throw violation }
    }

    // MARK: Rows

    func entity(_ number: Int) throws -> LMDBCatalog.Entity {
        guard catalog.entities.indices.contains(number) else {
            throw StrataError.misuse("no entity number \(number) in this store's schema")
        }
        return catalog.entities[number]
    }

    func storedRow(_ entity: LMDBCatalog.Entity, _ key: Int64) throws -> StoredRow? {
        try txn.get(entity.dbi, primaryKey: key) { bytes in
            try RowCodec.decode(bytes, key: key, layout: entity.layout)
        }
    }

    /// The stored row when its version is `expected`; otherwise records a conflict.
    private mutating func checkedRow(_ entity: LMDBCatalog.Entity, _ key: Int64, expected: Int64) throws -> StoredRow? {
        try checkKey(key)
        let row = try storedRow(entity, key)
        guard let row, row.version == expected else {
            conflicts.append(
                VersionConflict(
                    objectID: ObjectID(storeIdentifier: storeIdentifier, entityName: entity.name, primaryKey: key),
                    expectedVersion: expected, storedVersion: row?.version))
            return nil
        }
        return row
    }

    func checkKey(_ key: Int64) throws {
        guard key > 0 else { throw StrataError.misuse("primary keys are positive; got \(key)") }
    }

    /// Checks `write`'s values against the entity's columns: all of them, or only `columns` (those
    /// a set write changed, in a row of which only some columns were decoded: the others hold null).
    func validate(_ write: RowWrite, _ entity: LMDBCatalog.Entity, columns: [Int]? = nil) throws {
        let classes = entity.layout.classes
        // A row that does not fit the schema is the caller's mistake (the core always builds
        // rows from the schema), so it is `.misuse`, as on every engine.
        guard write.values.count == classes.count else {
            let count = write.values.count
            throw StrataError.misuse(
                "\(entity.name) row \(write.key) has \(count) values; the entity has \(classes.count) columns")
        }
        if let columns {
            for column in columns { try check(write.values[column], column: column, of: write.key, entity) }
        } else {
            for (column, value) in write.values.enumerated() { try check(value, column: column, of: write.key, entity) }
        }
    }

    /// Checks one value of row `key` against its column.
    private func check(_ value: StoredValue, column: Int, of key: Int64, _ entity: LMDBCatalog.Entity) throws {
        let classes = entity.layout.classes
        if !classes[column].admits(value) {
            let name = entity.columns[column].name
            throw StrataError.misuse("\(entity.name).\(name) stores \(classes[column].rawValue) values, got \(value)")
        }
        if case .null = value, !entity.columns[column].isOptional {
            throw StrataError.misuse(
                "\(entity.name).\(entity.columns[column].name) is not optional, got null in row \(key)")
        }
        if case .real(let real) = value, real.isNaN {
            throw StrataError.validation([
                ValidationIssue(
                    entity: entity.name, property: entity.columns[column].name, message: "NaN cannot be stored")
            ])
        }
    }

    /// Checks a row's version without writing it (``ChangeSet/verifies``).
    private mutating func verify(_ check: RowVersionCheck) throws {
        _ = try checkedRow(try entity(check.entity), check.key, expected: check.expectedVersion)
    }

    private mutating func delete(_ check: RowVersionCheck) throws {
        let entity = try entity(check.entity)
        guard let row = try checkedRow(entity, check.key, expected: check.expectedVersion) else { return }
        for index in entity.indexes {
            try txn.delete(index.dbi, indexKey(index, entity, row.values, check.key))
        }
        try txn.delete(entity.dbi, IndexKeyCodec.primaryKey(check.key))
        try removeLinks(entityNumber: check.entity, key: check.key)
    }

    private mutating func update(_ write: RowWrite) throws {
        let entity = try entity(write.entity)
        try validate(write, entity)
        guard let old = try checkedRow(entity, write.key, expected: write.expectedVersion) else { return }
        for index in entity.indexes {
            // A write that names its changed columns leaves the others as stored: an index on
            // none of them keeps its key.
            if let changed = write.changedColumns, !index.columns.contains(where: changed.contains) { continue }
            let oldKey = try indexKey(index, entity, old.values, write.key)
            let newKey = try indexKey(index, entity, write.values, write.key)
            if oldKey == newKey { continue }
            try txn.delete(index.dbi, oldKey)
            try putIndex(index, entity, newKey, write.key)
        }
        _ = RowCodec.encode(
            version: try Self.nextVersion(after: old.version, entity, write.key), values: write.values, checking: nil,
            into: rowBytes)
        try txn.put(entity.dbi, primaryKey: write.key, buffer: rowBytes)
    }

    private mutating func touch(_ check: RowVersionCheck) throws {
        let entity = try entity(check.entity)
        guard let old = try checkedRow(entity, check.key, expected: check.expectedVersion) else { return }
        _ = RowCodec.encode(
            version: try Self.nextVersion(after: old.version, entity, check.key), values: old.values, checking: nil,
            into: rowBytes)
        try txn.put(entity.dbi, primaryKey: check.key, buffer: rowBytes)
    }

    /// The version after a stored one; a row already at `Int64.max` cannot take another
    /// change (`.storeFull`), rather than trapping on the overflow.
    static func nextVersion(
        after version: Int64, _ entity: LMDBCatalog.Entity, _ key: Int64
    ) throws(StrataError) -> Int64 {
        let (next, overflow) = version.addingReportingOverflow(1)
        guard !overflow else {
            throw .storeFull(
                "row \(key) of \(entity.name) is at the highest version (\(version)); it cannot be changed again")
        }
        return next
    }

    // MARK: Indexes

    /// The index key of a row: encoded column values, then the primary key unless the index
    /// is unique and no value is null (nulls never conflict).
    /// - Throws: `.validation` when the key exceeds LMDB's key size limit.
    func indexKey(
        _ index: LMDBCatalog.Index, _ entity: LMDBCatalog.Entity, _ values: ContiguousArray<StoredValue>, _ key: Int64
    ) throws -> [UInt8] {
        var out: [UInt8] = []
        try Self.encodeIndexKey(index, entity, values, key, maxKeySize: maxKeySize, into: &out)
        return out
    }

    /// ``indexKey(_:_:_:_:)`` into `out`, replacing its contents (a migration refilling an index uses it too).
    static func encodeIndexKey(
        _ index: LMDBCatalog.Index, _ entity: LMDBCatalog.Entity, _ values: ContiguousArray<StoredValue>, _ key: Int64,
        maxKeySize: Int, into out: inout [UInt8]
    ) throws {
        out.removeAll(keepingCapacity: true)
        var hasNull = false
        for column in index.columns {
            IndexKeyCodec.append(values[column], to: &out)
            if values[column].isNull { hasNull = true }
        }
        if !index.isUnique || hasNull { IndexKeyCodec.appendBigEndian(UInt64(bitPattern: key), to: &out) }
        guard out.count <= maxKeySize else { throw keyTooLong(index, entity, size: out.count, maxKeySize: maxKeySize) }
    }

    /// The error for an index key longer than LMDB allows.
    static func keyTooLong(
        _ index: LMDBCatalog.Index, _ entity: LMDBCatalog.Entity, size: Int, maxKeySize: Int
    ) -> StrataError {
        .validation([
            ValidationIssue(
                entity: entity.name, property: index.columnNames.joined(separator: ", "),
                message:
                    """
                    the value is too long to index: its index key needs \(size) bytes but LMDB keys hold at most \
                    \(maxKeySize) (index \(index.name)); shorten the value or drop the index
                    """
            )
        ])
    }

    mutating func putIndex(
        _ index: LMDBCatalog.Index, _ entity: LMDBCatalog.Entity, _ indexKey: [UInt8], _ key: Int64
    ) throws {
        do {
            try txn.put(index.dbi, indexKey, primaryKeyValue: key, noOverwrite: true)
        } catch .keyExists {
            try recordDuplicate(index.dbi, index.isUnique, entity, indexKey, key) { index }
        }
    }

    /// Adds an index entry whose key is in `indexKey`, first as an append while `append` holds
    /// (cleared when LMDB refuses one: ``AppendHints``); an entry already there is a uniqueness
    /// violation when the index is unique and the entry belongs to another row (`index` is read
    /// only then).
    mutating func putIndex(
        _ dbi: LMDBDatabase, _ isUnique: Bool, _ entity: LMDBCatalog.Entity, _ indexKey: ByteBuffer, _ key: Int64,
        append: inout Bool, index: () -> LMDBCatalog.Index
    ) throws {
        do {
            if try !txn.putNew(dbi, key: indexKey, primaryKeyValue: key, append: append) { append = false }
        } catch .keyExists {
            try recordDuplicate(dbi, isUnique, entity, indexKey.array, key, index: index)
        }
    }

    /// Records a uniqueness violation for an index key that is already there, when the index is
    /// unique and the entry belongs to another row.
    private mutating func recordDuplicate(
        _ dbi: LMDBDatabase, _ isUnique: Bool, _ entity: LMDBCatalog.Entity, _ indexKey: [UInt8], _ key: Int64,
        index: () -> LMDBCatalog.Index
    ) throws {
        let owner = try txn.get(dbi, indexKey) { IndexKeyCodec.readPrimaryKey($0) } ?? nil
        if isUnique, owner != key, violation == nil {
            violation = .constraintViolation(
                entity: entity.name, attributes: index().columnNames, native: LMDBError.keyExists.native("mdb_put"))
        }
    }

    // MARK: Joins

    private func join(_ number: Int) throws -> LMDBCatalog.Join {
        guard catalog.joins.indices.contains(number) else {
            throw StrataError.misuse("no join number \(number) in this store's schema")
        }
        return catalog.joins[number]
    }

    static func pairKey(_ a: Int64, _ b: Int64) -> [UInt8] {
        var out = IndexKeyCodec.primaryKey(a)
        IndexKeyCodec.appendBigEndian(UInt64(bitPattern: b), to: &out)
        return out
    }

    private func link(_ link: JoinLink) throws {
        let join = try join(link.join)
        try checkKey(link.leftKey)
        try checkKey(link.rightKey)
        for (dbi, key) in [
            (join.left, Self.pairKey(link.leftKey, link.rightKey)),
            (join.right, Self.pairKey(link.rightKey, link.leftKey)),
        ] {
            do {
                try txn.put(dbi, key, [], noOverwrite: true)
            } catch .keyExists {
                continue
            }
        }
    }

    private func unlink(_ link: JoinLink) throws {
        let join = try join(link.join)
        try txn.delete(join.left, Self.pairKey(link.leftKey, link.rightKey))
        try txn.delete(join.right, Self.pairKey(link.rightKey, link.leftKey))
    }

    /// Removes every join pair that names the deleted row.
    func removeLinks(entityNumber: Int, key: Int64) throws {
        for join in catalog.joins {
            if join.leftEntity == entityNumber {
                for other in try linked(join.left, key) {
                    try txn.delete(join.left, Self.pairKey(key, other))
                    try txn.delete(join.right, Self.pairKey(other, key))
                }
            }
            if join.rightEntity == entityNumber {
                for other in try linked(join.right, key) {
                    try txn.delete(join.right, Self.pairKey(key, other))
                    try txn.delete(join.left, Self.pairKey(other, key))
                }
            }
        }
    }

    private func linked(_ dbi: LMDBDatabase, _ key: Int64) throws -> [Int64] {
        try Self.linkedKeys(txn, dbi, key)
    }

    /// The other-side keys stored under `key` in one join direction, ascending.
    static func linkedKeys(_ txn: LMDBTransaction, _ dbi: LMDBDatabase, _ key: Int64) throws -> [Int64] {
        let prefix = IndexKeyCodec.primaryKey(key)
        var keys: [Int64] = []
        try txn.scan(dbi, from: prefix, before: IndexKeyCodec.successor(ofPrefix: prefix)) { pair, _ in
            if let other = IndexKeyCodec.readPrimaryKey(pair, at: 8) { keys.append(other) }
            return true
        }
        return keys
    }
}
