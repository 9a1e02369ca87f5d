import Foundation
import StrataStorage

/// The named databases of a store and what each holds, opened from a `StoreSchema`.
///
/// - `strata.meta`: store UUID, schema version, format version, key counters, history token.
/// - `strata.history`: persistent history by token (`LMDBEngine+History.swift`).
/// - `e.<Entity>`: rows by 8-byte big-endian primary key (``RowCodec``).
/// - `i.<Index>`: one per `IndexSchema`, plus `r.<Entity>.<column>` for any reference column
///   no index starts with (``IndexKeyCodec`` keys, primary key as value).
/// - `j.<Join>.l` / `j.<Join>.r`: join pairs keyed (this side, other side), empty values.
struct LMDBCatalog: Sendable {
    struct Index: Sendable {
        var name: String
        var dbi: LMDBDatabase
        var columns: [Int]
        var isUnique: Bool
        var columnNames: [String]
    }

    /// A class, so that looking an entity up for every row read or written is one retain.
    final class Entity: Sendable {
        let dbi: LMDBDatabase
        let layout: EntityLayout
        let columns: [ColumnSchema]
        let indexes: [Index]
        /// The columns that are not optional, where an insert refuses a null.
        let requiredColumns: [Int]
        var name: String { layout.name }

        init(dbi: LMDBDatabase, layout: EntityLayout, columns: [ColumnSchema], indexes: [Index]) {
            self.dbi = dbi
            self.layout = layout
            self.columns = columns
            self.indexes = indexes
            requiredColumns = columns.indices.filter { !columns[$0].isOptional }
        }
    }

    struct Join: Sendable {
        var name: String
        var left: LMDBDatabase
        var right: LMDBDatabase
        var leftEntity: Int
        var rightEntity: Int
    }

    var meta: LMDBDatabase
    var entities: [Entity]
    var joins: [Join]

    static let formatVersion: Int64 = 1
    static let metaName = "strata.meta"

    /// The indexes an entity gets: its declared ones plus one per unindexed reference column.
    static func indexes(of entity: EntitySchema) -> [(name: String, columns: [Int], isUnique: Bool)] {
        var result = entity.indexes.map { (name: "i.\($0.name)", columns: $0.columns, isUnique: $0.isUnique) }
        for (number, column) in entity.columns.enumerated() where column.type == .reference {
            if !entity.indexes.contains(where: { $0.columns.first == number }) {
                result.append((name: "r.\(entity.name).\(column.name)", columns: [number], isUnique: false))
            }
        }
        return result
    }

    /// How many named databases a schema needs (for `mdb_env_set_maxdbs`), with room to spare: a
    /// migration at open may hold the databases of two versions at once (the store's and the
    /// next one's, renamed ones are copied before the old ones are dropped), so the count covers
    /// twice the largest of the schema and every version of its migration plan.
    static func databaseCount(_ schema: StoreSchema) -> Int {
        let versions = [schema] + (schema.migrationPlan?.versions ?? [])
        let largest = versions.map { $0.entities.reduce(0) { $0 + 1 + indexes(of: $1).count } + 2 * $0.joins.count }
        // The metadata and history databases, then the schema's.
        return 2 + 2 * (largest.max() ?? 0) + 8
    }

    /// What the metadata database records.
    struct Metadata {
        var storeIdentifier: UUID
        var schemaVersion: Int
        /// Whether the store carries ``UnfinishedCopy/marker`` (read by the open).
        var isUnfinishedCopy = false
    }

    /// Reads (or, for a new store, writes) the metadata, migrates an older store, and opens every database.
    /// - Throws: `.notAStore` (an LMDB environment without Strata metadata or of an unknown
    ///   format), `.schemaMismatch` and the migration's errors (see
    ///   ``reconcileRecordedSchema(_:meta:schema:metadata:path:maxKeySize:)``), `.storeCorrupt`,
    ///   LMDB errors.
    static func open(
        _ txn: LMDBTransaction, schema: StoreSchema, path: String, maxKeySize: Int
    ) throws -> (LMDBCatalog, Metadata) {
        let meta: LMDBDatabase
        do {
            meta = try txn.openDatabase(metaName, create: false)
        } catch .notFound {
            let main = try txn.openDatabase(nil, create: false)
            guard try txn.count(main) == 0 else {
                throw StrataError.notAStore(path: path, reason: "the LMDB environment holds no Strata metadata")
            }
            meta = try txn.openDatabase(metaName, create: true)
            let uuid = UUID().uuid
            let uuidBytes = [
                uuid.0, uuid.1, uuid.2, uuid.3, uuid.4, uuid.5, uuid.6, uuid.7,
                uuid.8, uuid.9, uuid.10, uuid.11, uuid.12, uuid.13, uuid.14, uuid.15,
            ]
            try txn.put(meta, Array("store_uuid".utf8), uuidBytes)
            try txn.put(meta, Array("schema_version".utf8), IndexKeyCodec.primaryKey(Int64(schema.version)))
            try txn.put(meta, Array("format_version".utf8), IndexKeyCodec.primaryKey(formatVersion))
            try recordSchema(txn, meta: meta, schema)
        } catch .incompatible {
            throw StrataError.notAStore(path: path, reason: "the LMDB environment holds no Strata metadata")
        }
        var metadata = try readMetadata(txn, meta: meta, path: path)
        metadata.isUnfinishedCopy =
            try txn.get(meta, LMDBEngine.cursorPrefix + Array(UnfinishedCopy.marker.utf8)) { _ in true } ?? false
        if try reconcileRecordedSchema(
            txn, meta: meta, schema: schema, metadata: metadata, path: path, maxKeySize: maxKeySize)
        {
            metadata.schemaVersion = schema.version
        }
        return (try build(txn, meta: meta, schema: schema), metadata)
    }

    /// The catalog of `schema` over the store open in `txn`: every database it uses, opened
    /// (created empty when missing). The open uses it for the model's schema, a migration's
    /// transaction engine for the schema of one version.
    static func build(_ txn: LMDBTransaction, meta: LMDBDatabase, schema: StoreSchema) throws -> LMDBCatalog {
        var entities: [Entity] = []
        for entity in schema.entities {
            let dbi = try openDatabase(txn, "e.\(entity.name)")
            var indexes: [Index] = []
            for index in Self.indexes(of: entity) {
                indexes.append(
                    Index(
                        name: index.name, dbi: try openDatabase(txn, index.name), columns: index.columns,
                        isUnique: index.isUnique, columnNames: index.columns.map { entity.columns[$0].name }))
            }
            let classes = ContiguousArray(entity.columns.map(\.type.storageClass))
            entities.append(
                Entity(
                    dbi: dbi, layout: EntityLayout(name: entity.name, classes: classes), columns: entity.columns,
                    indexes: indexes))
        }
        var joins: [Join] = []
        for join in schema.joins {
            joins.append(
                Join(
                    name: join.name, left: try openDatabase(txn, "j.\(join.name).l"),
                    right: try openDatabase(txn, "j.\(join.name).r"),
                    leftEntity: join.leftEntity, rightEntity: join.rightEntity))
        }
        return LMDBCatalog(meta: meta, entities: entities, joins: joins)
    }

    private static func openDatabase(_ txn: LMDBTransaction, _ name: String) throws -> LMDBDatabase {
        try txn.openDatabase(name, create: true)
    }

    /// The store's identifier and schema version from the metadata database (also read by the
    /// store inspection of tools, so that both judge a store's metadata alike).
    /// - Throws: `.notAStore` for a missing or other format version, `.storeCorrupt` for a missing value.
    static func readMetadata(_ txn: LMDBTransaction, meta: LMDBDatabase, path: String) throws -> Metadata {
        let format = try txn.get(meta, Array("format_version".utf8)) { IndexKeyCodec.readPrimaryKey($0) } ?? nil
        guard let format else {
            throw StrataError.notAStore(path: path, reason: "the Strata metadata has no format version")
        }
        guard format == formatVersion else {
            throw StrataError.notAStore(
                path: path,
                reason: "Strata LMDB format \(format) is not supported (this build reads format \(formatVersion))")
        }
        let version = try txn.get(meta, Array("schema_version".utf8)) { IndexKeyCodec.readPrimaryKey($0) } ?? nil
        let uuid =
            try txn.get(meta, Array("store_uuid".utf8)) { bytes -> UUID? in
                let b = IndexKeyCodec.array(bytes)
                guard b.count == 16 else { return nil }
                return UUID(
                    uuid: (
                        b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14],
                        b[15]
                    ))
            } ?? nil
        guard let version, let uuid else {
            throw StrataError.storeCorrupt("\(path): the Strata metadata is incomplete")
        }
        return Metadata(storeIdentifier: uuid, schemaVersion: Int(version))
    }

    /// The metadata key of an entity's key counter.
    static func counterKey(_ entity: String) -> [UInt8] { Array("counter.\(entity)".utf8) }

    /// Throws `.storeNewerThanModel` when the store's schema version is no longer `version`, the
    /// one this catalog was opened for: another engine (this process or another, a newer version
    /// of the app) migrated the store since, and rows in this catalog's layout must not be written
    /// into it. One lookup in the metadata database, inside the write transaction.
    func checkSchemaVersion(_ txn: LMDBTransaction, _ version: Int) throws {
        let stored = try txn.get(meta, Array("schema_version".utf8)) { IndexKeyCodec.readPrimaryKey($0) } ?? nil
        if let stored, stored != Int64(version) {
            throw StrataError.storeNewerThanModel(storeVersion: Int(stored), modelVersion: version)
        }
    }

    /// Reserves `count` primary keys of `entity` in `txn`: from its counter, and past its last
    /// stored key (stored numbers are not trusted to leave room).
    /// - Throws: `.storeFull` when the keys are exhausted; LMDB errors.
    func reserveKeys(_ txn: LMDBTransaction, entity: Entity, count: Int64) throws -> Range<Int64> {
        let name = entity.name
        let counterKey = Self.counterKey(name)
        let counter = try txn.get(meta, counterKey) { IndexKeyCodec.readPrimaryKey($0) } ?? nil
        let last = try txn.lastKey(entity.dbi) { IndexKeyCodec.readPrimaryKey($0) } ?? nil
        // A last key of Int64.max means the keys are exhausted, not a trap.
        let (afterLast, lastOverflow) = (last ?? 0).addingReportingOverflow(1)
        guard !lastOverflow else { throw StrataError.storeFull("the primary keys of \(name) are exhausted") }
        let next = max(counter ?? 1, afterLast, 1)
        let (end, overflow) = next.addingReportingOverflow(count)
        guard !overflow else { throw StrataError.storeFull("the primary keys of \(name) are exhausted") }
        try txn.put(meta, counterKey, IndexKeyCodec.primaryKey(end))
        return next..<end
    }
}
