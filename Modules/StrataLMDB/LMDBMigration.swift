import StrataStorage

/// Applies one inferred migration step list inside the open's write transaction, and records the
/// plan's target schema and version in the same transaction (the caller aborts it on any error).
///
/// - Entities: added (an empty `e.` database), dropped (`mdb_drop` of its database, its key
///   counter deleted), renamed (its rows copied to the new `e.` database in key order, the old
///   one dropped, the key counter moved).
/// - Joins: added (empty `j.<name>.l` / `.r`), dropped, renamed (both directions copied).
/// - Columns (attributes and to-one relationships added, dropped, renamed, reordered, made
///   required): every row of each changed entity is rewritten once, in place (``rewriteRows()``).
/// - Indexes: after the rows, every index database the new schema uses that is missing, that a
///   step adds, or that covers a column whose values were filled is cleared and refilled from
///   the rows with the committer's key encoding; a duplicate in a unique one throws
///   `constraintViolation`. Index databases the new schema no longer uses are dropped
///   (``reconcileIndexes()``).
///
/// Make-optional, default and delete-rule changes need nothing: rows admit null in every column,
/// and defaults and rules live in the core.
struct LMDBMigration {
    let txn: LMDBTransaction
    let meta: LMDBDatabase
    let plan: SchemaMigrationPlan
    /// The layout after the migration (the plan's target version).
    let schema: StoreSchema
    let maxKeySize: Int
    let progress: MigrationRowProgress

    /// Entity renames: new name → the store's name.
    var renamedEntities: [String: String] = [:]
    /// Per entity (new name), column renames: the store's name → new name.
    var renamedColumns: [String: [String: String]] = [:]
    /// Per entity, the value written into a new column, or into the nulls of a column made required.
    var fills: [String: [String: StoredValue]] = [:]
    /// Per entity, the columns a step drops: one the plan adds again under the same name (a
    /// custom stage's replacement of a type change) takes its fill, never the old value.
    var dropped: [String: Set<String>] = [:]
    /// Entities whose rows are rewritten.
    var changed: Set<String> = []
    /// Entities the plan adds (they have no rows to rewrite).
    var added: Set<String> = []
    /// Index databases (`i.<name>`) that a step adds, by entity.
    var indexesToFill: [String: Set<String>] = [:]

    /// How often progress is reported while rows are rewritten or copied.
    static let progressInterval = 5_000

    init(
        txn: LMDBTransaction, meta: LMDBDatabase, plan: SchemaMigrationPlan, schema: StoreSchema, maxKeySize: Int,
        progress: MigrationRowProgress
    ) {
        self.txn = txn
        self.meta = meta
        self.plan = plan
        self.schema = schema
        self.maxKeySize = maxKeySize
        self.progress = progress
    }

    /// Applies every step, rewrites the rows, refills and drops index databases, then records
    /// the target schema and version.
    mutating func run() throws {
        for step in plan.steps { try apply(step) }
        try rewriteRows()
        try reconcileIndexes()
        try txn.put(meta, Array("schema_version".utf8), IndexKeyCodec.primaryKey(Int64(plan.target.version)))
        try txn.put(meta, LMDBCatalog.recordedSchemaKey, Array(try plan.target.jsonText().utf8))
    }

    private mutating func apply(_ step: SchemaMigrationStep) throws {
        switch step {
        case .dropIndex(_, let name), .dropUniqueConstraint(_, let name):
            try dropDatabase("i.\(name)")
        case .dropJoin(let name):
            try dropDatabase("j.\(name).l")
            try dropDatabase("j.\(name).r")
        case .renameEntity(let from, let to):
            try moveDatabase("e.\(from)", to: "e.\(to)")
            let counter = try txn.get(meta, LMDBCatalog.counterKey(from)) { IndexKeyCodec.array($0) }
            if let counter {
                try txn.put(meta, LMDBCatalog.counterKey(to), counter)
                try txn.delete(meta, LMDBCatalog.counterKey(from))
            }
            renamedEntities[to] = renamedEntities[from] ?? from
        case .renameJoin(let from, let to):
            try moveDatabase("j.\(from).l", to: "j.\(to).l")
            try moveDatabase("j.\(from).r", to: "j.\(to).r")
        case .swapJoinSides(let name):
            // `l` maps left keys to right keys and `r` the reverse: swapping the sides swaps them.
            try moveDatabase("j.\(name).l", to: "j.\(name).swapping")
            try moveDatabase("j.\(name).r", to: "j.\(name).l")
            try moveDatabase("j.\(name).swapping", to: "j.\(name).r")
        case .dropEntity(let name):
            try dropDatabase("e.\(name)")
            try txn.delete(meta, LMDBCatalog.counterKey(name))
        case .renameAttribute(let entity, let from, let to):
            // Renames pass names along and swap through temporary names: the store's name of the
            // column named `from` now gets `to`.
            var columns = renamedColumns[entity, default: [:]]
            columns[columns.first { $0.value == from }?.key ?? from] = to
            renamedColumns[entity] = columns
            changed.insert(entity)
        case .dropAttribute(let entity, let attribute):
            dropped[entity, default: []].insert(attribute)
            changed.insert(entity)
        case .reorderColumns(let entity, _):
            changed.insert(entity)
        case .dropRelationship(let entity, let relationship):
            // A to-one is a key column (its index is reconciled with the others); a to-many or a
            // many-to-many stores nothing of its own.
            guard relationship.kind == .toOne else { break }
            dropped[entity, default: []].insert(relationship.name)
            changed.insert(entity)
        case .addRelationship(let entity, let relationship):
            if relationship.kind == .toOne { changed.insert(entity) }
        case .addEntity(let entity):
            try txn.drop(try txn.openDatabase("e.\(entity.name)", create: true), delete: false)
            added.insert(entity.name)
        case .addAttribute(let entity, let attribute, let fill):
            fills[entity, default: [:]][attribute.name] = fill
            changed.insert(entity)
        case .makeRequired(let entity, let attribute, let fill):
            fills[entity, default: [:]][attribute] = fill
            changed.insert(entity)
        case .makeOptional, .changeDefault, .changeDeleteRule:
            break
        case .addJoin(let join):
            try txn.drop(try txn.openDatabase("j.\(join.name).l", create: true), delete: false)
            try txn.drop(try txn.openDatabase("j.\(join.name).r", create: true), delete: false)
        case .addIndex(let entity, let index), .addUniqueConstraint(let entity, let index):
            indexesToFill[entity, default: []].insert("i.\(index.name)")
        }
    }

    /// Drops a database and its handle; nothing when the store has none of that name.
    private func dropDatabase(_ name: String) throws {
        guard let dbi = try existingDatabase(name) else { return }
        try txn.drop(dbi, delete: true)
    }

    /// The handle of a database the store has, or nil.
    func existingDatabase(_ name: String) throws -> LMDBDatabase? {
        do {
            return try txn.openDatabase(name, create: false)
        } catch .notFound {
            return nil
        }
    }

    /// Renames a database: its entries copied in key order into a new (emptied) one of the new
    /// name, then the old one dropped.
    private func moveDatabase(_ from: String, to: String) throws {
        guard let source = try existingDatabase(from) else { return }
        let target = try txn.openDatabase(to, create: true)
        try txn.drop(target, delete: false)
        let total = try txn.count(source)
        let copied = try txn.copyAll(source, to: target, every: Self.progressInterval) {
            progress.rowsMigrated($0, of: total)
        }
        if from.hasPrefix("e.") { progress.rowsMigrated(copied, of: total) }
        try txn.drop(source, delete: true)
    }
}
