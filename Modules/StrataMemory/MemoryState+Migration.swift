import StrataStorage

/// An inferred migration (``StrataStorage/SchemaMigrationPlan``) applied to the state: the steps
/// change tables and joins by name, then every table is laid out as the target schema's entity,
/// its unique lookups rebuilt (a clash is the new constraint's `.constraintViolation`), and the
/// target recorded. Nothing of it is kept unless the whole open succeeds: the session works on a
/// copy of the store's state.
extension MemoryState {
    /// A table while steps rename and reshape it: its column names, its rows in that layout and
    /// its key counter.
    private struct NamedTable {
        var columns: [String] = []
        var rows: [Int64: MemoryRow] = [:]
        var lastKey: Int64 = 0

        mutating func add(_ column: String, fill: StoredValue) {
            drop(column)
            columns.append(column)
            for key in rows.keys { rows[key]?.values.append(fill) }
        }

        mutating func drop(_ column: String) {
            guard let position = columns.firstIndex(of: column) else { return }
            columns.remove(at: position)
            for key in rows.keys { rows[key]?.values.remove(at: position) }
        }

        mutating func fillNulls(_ column: String, with fill: StoredValue) {
            guard let position = columns.firstIndex(of: column) else { return }
            for (key, row) in rows where row.values[position].isNull { rows[key]?.values[position] = fill }
        }
    }

    /// Applies `plan`, lays the store out as `target` and records `plan.target`.
    /// - Throws: `.constraintViolation` when existing rows clash on a unique index of `target`;
    ///   `.invalidSchema` when the target cannot be written as JSON.
    mutating func migrate(
        _ plan: SchemaMigrationPlan, to target: StoreSchema, progress: MigrationRowProgress
    ) throws(StrataError) {
        var named: [String: NamedTable] = [:]
        for entity in schema.entities {
            named[entity.name] = NamedTable(
                columns: entity.columns.map(\.name),
                rows: Dictionary(uniqueKeysWithValues: tables[entity.number].rows.lazy.map { ($0.key, $0.value) }),
                lastKey: lastKeys[entity.number])
        }
        var namedJoins: [String: MemoryJoin] = [:]
        for join in schema.joins { namedJoins[join.name] = joins[join.number] }
        // Free the old tables: the named copies are then the only references, and change in place.
        tables = []
        for step in plan.steps { Self.apply(step, to: &named, joins: &namedJoins) }
        var laidOut: [MemoryTable] = []
        var keys: [Int64] = []
        for entity in target.entities {
            let source = named.removeValue(forKey: entity.name) ?? NamedTable()
            let table = try Self.layOut(source, as: entity, progress: progress)
            laidOut.append(table)
            keys.append(source.lastKey)
        }
        tables = laidOut
        lastKeys = keys
        joins = target.joins.map { namedJoins[$0.name] ?? MemoryJoin() }
        schema = target
        recordedJSON = try plan.target.jsonText()
        generation += 1
    }

    private static func apply(
        _ step: SchemaMigrationStep, to named: inout [String: NamedTable], joins: inout [String: MemoryJoin]
    ) {
        switch step {
        case .addEntity(let entity): named[entity.name] = NamedTable()
        case .dropEntity(let name): named[name] = nil
        case .renameEntity(let from, let to): named[to] = named.removeValue(forKey: from)
        case .addAttribute(let entity, let attribute, let fill): named[entity]?.add(attribute.name, fill: fill)
        case .dropAttribute(let entity, let attribute): named[entity]?.drop(attribute)
        case .renameAttribute(let entity, let from, let to):
            if let position = named[entity]?.columns.firstIndex(of: from) { named[entity]?.columns[position] = to }
        case .makeRequired(let entity, let attribute, let fill): named[entity]?.fillNulls(attribute, with: fill)
        case .addRelationship(let entity, let relationship) where relationship.kind == .toOne:
            named[entity]?.add(relationship.name, fill: .null)
        case .dropRelationship(let entity, let relationship) where relationship.kind == .toOne:
            named[entity]?.drop(relationship.name)
        case .addJoin(let join): joins[join.name] = MemoryJoin()
        case .dropJoin(let name): joins[name] = nil
        case .renameJoin(let from, let to): joins[to] = joins.removeValue(forKey: from)
        case .swapJoinSides(let name): joins[name] = joins[name]?.swapped
        case .addRelationship, .dropRelationship, .makeOptional, .changeDefault, .changeDeleteRule, .reorderColumns,
            .addIndex, .dropIndex, .addUniqueConstraint, .dropUniqueConstraint:
            // Nothing stored changes: the layout and the unique lookups are rebuilt at the end.
            break
        }
    }

    /// `source`'s rows in `entity`'s column order (an integer in a real column becomes a real),
    /// with its unique lookups.
    /// - Throws: `.constraintViolation` naming the first unique index two rows clash on.
    /// Rows between two reports of a table's progress, as the durable engines give them.
    static let progressInterval = 5_000

    /// The rows of `source` laid out as `entity`'s table, with its indexes built; `progress` hears
    /// every ``progressInterval`` rows and once at the end.
    private static func layOut(
        _ source: NamedTable, as entity: EntitySchema, progress: MigrationRowProgress
    ) throws(StrataError) -> MemoryTable {
        let positions = entity.columns.map { source.columns.firstIndex(of: $0.name) }
        let total = source.rows.count
        var done = 0
        var table = MemoryTable(entity)
        for (key, row) in source.rows {
            var values = ContiguousArray<StoredValue>()
            values.reserveCapacity(positions.count)
            for (column, position) in positions.enumerated() {
                var value = position.map { row.values[$0] } ?? .null
                if entity.columns[column].type.storageClass == .real, case .integer(let integer) = value {
                    value = .real(Double(integer))
                }
                values.append(value)
            }
            table.rows[key] = MemoryRow(version: row.version, values: values)
            done += 1
            if done % progressInterval == 0 { progress.rowsMigrated(done, of: total) }
        }
        progress.rowsMigrated(done, of: total)
        if let clash = table.reindex() {
            let columns = entity.indexes[clash.position].columns.map { entity.columns[$0].name }
            throw .constraintViolation(
                entity: entity.name, attributes: columns,
                native: MigrationUniqueClash.cause(
                    engine: MemoryEngine.name, code: MemoryValues.uniqueClashCode, entity: entity.name,
                    attributes: columns, keys: clash.keys, values: clash.values.map(\.description)))
        }
        return table
    }
}
