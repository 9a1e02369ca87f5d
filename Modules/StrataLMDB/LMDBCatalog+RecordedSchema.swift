import StrataStorage

extension LMDBCatalog {
    /// The metadata key of the recorded schema (JSON, see `RecordedSchema.jsonText()`).
    static let recordedSchemaKey = Array("schema".utf8)

    /// Records the schema's JSON in the metadata database (nothing for a schema without one).
    static func recordSchema(_ txn: LMDBTransaction, meta: LMDBDatabase, _ schema: StoreSchema) throws {
        guard let recorded = schema.recorded else { return }
        try txn.put(meta, recordedSchemaKey, Array(try recorded.jsonText().utf8))
    }

    /// Compares what the store recorded with the schema, inside the open's write transaction,
    /// before any database of the schema is opened, and migrates an older store there
    /// (``StoreSchema/reconcileRecorded(storeVersion:recordedJSON:path:session:)`` with an
    /// ``LMDBMigrationSession`` over this transaction).
    ///
    /// A store made before recorded schemas (no `schema` entry) whose version matches is
    /// upgraded once: it must hold exactly the named databases this schema uses (one per entity,
    /// per index, two per join, the metadata, and the history database when present), and every
    /// row must decode with the model's columns (their count and storage classes, no nil in a
    /// required column). Rows carry no
    /// column names, so two columns of one class swapped or renamed go unseen. Then the schema is
    /// recorded.
    ///
    /// A migration that runs out of map throws `LMDBError.mapFull` (whatever error it ended
    /// with), so that the writer grows the map and runs the open again.
    /// - Throws: `.schemaMismatch` (versions or shapes differ, or the unrecorded store's databases
    ///   or rows are not the model's; a damaged row is reported the same way),
    ///   `.storeNewerThanModel`, `.storeCorrupt` (unreadable JSON), `.notAStore` (JSON of a newer
    ///   layout), LMDB errors, `.migrationNotInferable`, `.migrationStageFailed` and a migration
    ///   step's errors.
    /// - Returns: whether an older store was migrated here; its version is then the schema's.
    static func reconcileRecordedSchema(
        _ txn: LMDBTransaction, meta: LMDBDatabase, schema: StoreSchema, metadata: Metadata, path: String,
        maxKeySize: Int
    ) throws -> Bool {
        let storeVersion = metadata.schemaVersion
        let json = try txn.get(meta, recordedSchemaKey) { String(decoding: IndexKeyCodec.array($0), as: UTF8.self) }
        let session = LMDBMigrationSession(
            txn: txn, meta: meta, storeIdentifier: metadata.storeIdentifier, path: path, maxKeySize: maxKeySize)
        let outcome: RecordedSchemaOutcome
        do {
            outcome = try schema.reconcileRecorded(
                storeVersion: storeVersion, recordedJSON: json, path: path, session: session)
        } catch {
            if session.ranOutOfMap { throw LMDBError.mapFull }
            throw error
        }
        switch outcome {
        case .matches: return false
        case .migrated: return true
        case .recordNow: break
        }
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
        // The history database (created at the first open by a build that keeps history) is
        // not the model's: counted when present.
        do {
            _ = try txn.openDatabase(LMDBEngine.historyName, create: false)
            expected.append(LMDBEngine.historyName)
        } catch .notFound {}
        let present = try txn.count(try txn.openDatabase(nil, create: false))
        guard present == expected.count + 1 else {
            throw StrataError.schemaMismatch(
                storeVersion: storeVersion, modelVersion: schema.version,
                differences: [
                    .unrecordedStoreDiffers(
                        "it has \(present) databases where the model uses \(expected.count + 1)")
                ])
        }
        for entity in schema.entities {
            try checkRows(txn, entity, storeVersion: storeVersion, modelVersion: schema.version)
        }
        try recordSchema(txn, meta: meta, schema)
        return false
    }

    /// Checks that every row of an unrecorded store's entity has the model's columns: their
    /// count, their storage classes, and no nil in a required column (read once, at the upgrade).
    private static func checkRows(
        _ txn: LMDBTransaction, _ entity: EntitySchema, storeVersion: Int, modelVersion: Int
    ) throws {
        let layout = EntityLayout(name: entity.name, classes: ContiguousArray(entity.columns.map(\.type.storageClass)))
        func refuse(_ detail: String) -> StrataError {
            .schemaMismatch(
                storeVersion: storeVersion, modelVersion: modelVersion, differences: [.unrecordedStoreDiffers(detail)])
        }
        try txn.scan(try txn.openDatabase("e.\(entity.name)", create: false)) { keyBytes, value in
            let key = IndexKeyCodec.readPrimaryKey(keyBytes) ?? -1
            let row: StoredRow
            do {
                row = try RowCodec.decode(value, key: key, layout: layout)
            } catch {
                throw refuse("its rows do not have the model's columns: \(error)")
            }
            for (column, stored) in zip(entity.columns, row.values) where !column.isOptional && stored.isNull {
                throw refuse("row \(key) of \(entity.name) has no value for the required \(column.name)")
            }
            return true
        }
    }
}
