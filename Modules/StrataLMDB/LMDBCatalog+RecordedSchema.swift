import CLMDB
import StrataStorage

extension LMDBCatalog {
    /// The metadata key of the recorded schema (JSON, see `RecordedSchema.jsonText()`).
    static let recordedSchemaKey = Array("schema".utf8)

    /// Records the schema's JSON in the metadata database (nothing for a schema without one).
    static func recordSchema(_ txn: LMDBTransaction, meta: MDB_dbi, _ schema: StoreSchema) throws {
        guard let recorded = schema.recorded else { return }
        try txn.put(meta, recordedSchemaKey, Array(try recorded.jsonText().utf8))
    }

    /// Compares what the store recorded with the schema, inside the open's write transaction,
    /// before any database is created.
    ///
    /// A store made before recorded schemas (no `schema` entry) whose version matches is
    /// upgraded once: it must hold exactly the named databases this schema uses (one per entity,
    /// per index, two per join, and the metadata), then the schema is recorded. LMDB rows carry
    /// no column names, so an unrecorded store's columns are trusted to the version number.
    /// - Throws: `.schemaMismatch` (versions or shapes differ, or the unrecorded store's databases
    ///   are not the model's), `.storeCorrupt` (unreadable JSON), `.notAStore` (JSON of a newer
    ///   layout), LMDB errors.
    static func checkRecordedSchema(
        _ txn: LMDBTransaction, meta: MDB_dbi, schema: StoreSchema, storeVersion: Int, path: String
    ) throws {
        let json = try txn.get(meta, recordedSchemaKey) { String(decoding: IndexKeyCodec.array($0), as: UTF8.self) }
        let check = try schema.checkRecorded(storeVersion: storeVersion, recordedJSON: json, path: path)
        guard check == .recordNow else { return }
        var expected: [String] = []
        for entity in schema.entities { expected += ["e.\(entity.name)"] + indexes(of: entity).map(\.name) }
        for join in schema.joins { expected += ["j.\(join.name).l", "j.\(join.name).r"] }
        for name in expected {
            do {
                _ = try txn.openDatabase(name, create: false)
            } catch .notFound {
                throw StrataError.schemaMismatch(
                    storeVersion: storeVersion, modelVersion: schema.version,
                    differences: [.unrecordedStoreDiffers("the store has no database \(name)")])
            }
        }
        let present = try txn.count(try txn.openDatabase(nil, create: false))
        guard present == expected.count + 1 else {
            throw StrataError.schemaMismatch(
                storeVersion: storeVersion, modelVersion: schema.version,
                differences: [
                    .unrecordedStoreDiffers(
                        "it has \(present) databases where the model uses \(expected.count + 1)")
                ])
        }
        try recordSchema(txn, meta: meta, schema)
    }
}
