import CLMDB
import StrataStorage

/// Applies an inferred migration's column steps by rewriting rows, inside the open's write transaction.
///
/// Each entity whose columns change is rewritten once: every row is decoded with the store's
/// columns (the recorded source, after renames), mapped by name to the model's columns, filled
/// where a column is new (or a null became required), and written back under the same key and
/// version. Index entries hold column values and keys, not positions, so they stay valid.
/// Not yet applied (they throw `.misuse`, and the transaction is aborted): entity, index,
/// constraint, relationship and join additions, removals and renames.
struct LMDBMigration: SchemaMigrationApplier {
    let txn: LMDBTransaction
    let meta: MDB_dbi

    func apply(
        _ plan: SchemaMigrationPlan, to schema: StoreSchema, progress: MigrationRowProgress
    ) throws(StrataError) {
        do {
            try rewrite(plan, schema: schema)
            try txn.put(meta, Array("schema_version".utf8), IndexKeyCodec.primaryKey(Int64(schema.version)))
            try txn.put(meta, LMDBCatalog.recordedSchemaKey, Array(try plan.target.jsonText().utf8))
        } catch {
            throw strataError(error, "migrating the store's rows")
        }
    }

    private func rewrite(_ plan: SchemaMigrationPlan, schema: StoreSchema) throws {
        var renamed: [String: [String: String]] = [:] // entity → old name → new name
        var fills: [String: [String: StoredValue]] = [:] // entity → column → value for null or new
        var changed: Set<String> = []
        for step in plan.steps {
            switch step {
            case .addAttribute(let entity, let attribute, let fill):
                fills[entity, default: [:]][attribute.name] = fill
                changed.insert(entity)
            case .makeRequired(let entity, let attribute, let fill):
                fills[entity, default: [:]][attribute] = fill
                changed.insert(entity)
            case .renameAttribute(let entity, let from, let to):
                renamed[entity, default: [:]][from] = to
                changed.insert(entity)
            case .dropAttribute(let entity, _), .reorderColumns(let entity, _):
                changed.insert(entity)
            case .makeOptional, .changeDefault, .changeDeleteRule:
                break // Rows admit null in every column; defaults and rules live in the core.
            default:
                throw StrataError.misuse("the LMDB engine cannot apply this migration step yet: \(step)")
            }
        }
        for name in changed.sorted() {
            guard let old = plan.source.entity(named: name), let new = schema.entities.first(where: { $0.name == name })
            else { throw StrataError.misuse("no entity \(name) in the migration's schemas") }
            let oldNames = old.columns.map { renamed[name]?[$0] ?? $0 }
            let oldClasses = ContiguousArray(
                old.columns.map { column in
                    (old.attributes.first { $0.name == column }?.type ?? .reference).storageClass
                })
            let layout = EntityLayout(name: name, classes: oldClasses)
            let sources = new.columns.map { oldNames.firstIndex(of: $0.name) }
            let dbi = try txn.openDatabase("e.\(name)", create: false)
            var rows: [StoredRow] = []
            try txn.scan(dbi) { keyBytes, value in
                rows.append(
                    try RowCodec.decode(value, key: IndexKeyCodec.readPrimaryKey(keyBytes) ?? -1, layout: layout))
                return true
            }
            for row in rows {
                var values = ContiguousArray<StoredValue>()
                for (column, source) in zip(new.columns, sources) {
                    var value = source.map { row.values[$0] } ?? .null
                    if value.isNull, let fill = fills[name]?[column.name] { value = fill }
                    values.append(value)
                }
                try txn.put(dbi, primaryKey: row.key, RowCodec.encode(version: row.version, values: values))
            }
        }
    }
}
