extension SchemaMigrationPlan {
    /// `source` with the renames applied (names in entities, columns, indexes, relationship
    /// targets and joins), and the rename steps, in an order where each new name is free when its
    /// step runs.
    ///
    /// Renames are taken together, as Core Data's renaming identifiers are: names that swap
    /// (`a` was `b`, `b` was `a`) or pass along (`b` was `a`, `c` was `b`) keep every value
    /// under the name the model gives it. Attributes that swap go through a temporary name; entities
    /// that swap are refused, since an engine renames a table, its key counter and its joins
    /// together. A rename whose old name the store does not have, or whose new name the store
    /// keeps for something not renamed away, is ignored (as Core Data ignores a renaming
    /// identifier it cannot match): the item is then planned as added, or refused as such.
    /// - Throws: ``StrataError/misuse(_:native:)`` when entities swap names.
    static func applying(
        _ renames: SchemaRenames, to source: RecordedSchema, target: RecordedSchema
    ) throws(StrataError) -> (RecordedSchema, [SchemaMigrationStep]) {
        var schema = source
        var steps: [SchemaMigrationStep] = []
        let entityRenames = RenameSequence(
            renames.entities.sorted { $0.key < $1.key }.map { (from: $0.value, to: $0.key) },
            names: Set(schema.entities.map(\.name)), reserved: nil)
        if let cycle = entityRenames.cycle {
            throw .misuse(
                """
                entities \(cycle.joined(separator: ", ")) take each other's names through originalEntityName \
                in one migration; Strata renames an entity's rows, key counter and joins together and cannot \
                swap them: rename them over two schema versions (first to new names, then to the final ones)
                """)
        }
        for (old, new) in entityRenames.steps {
            guard let index = schema.entities.firstIndex(where: { $0.name == old }) else { continue }
            schema.entities[index].name = new
            for entity in schema.entities.indices {
                for relationship in schema.entities[entity].relationships.indices
                where schema.entities[entity].relationships[relationship].target == old {
                    schema.entities[entity].relationships[relationship].target = new
                }
            }
            for join in schema.joins.indices {
                if schema.joins[join].left == old { schema.joins[join].left = new }
                if schema.joins[join].right == old { schema.joins[join].right = new }
            }
            steps.append(.renameEntity(from: old, to: new))
        }
        for (entityName, map) in renames.attributes.sorted(by: { $0.key < $1.key }) {
            guard let entity = schema.entities.firstIndex(where: { $0.name == entityName }) else { continue }
            let stored = schema.entities[entity]
            let declared = target.entity(named: entityName)
            // Attributes only: a relationship's name is taken, never renamed here.
            let attributeNames = Set(stored.attributes.map(\.name))
            let sequence = RenameSequence(
                map.sorted { $0.key < $1.key }.map { (from: $0.value, to: $0.key) }.filter {
                    attributeNames.contains($0.from)
                },
                names: Set(stored.attributes.map(\.name) + stored.relationships.map(\.name)),
                reserved: Set((declared?.attributes.map(\.name) ?? []) + (declared?.relationships.map(\.name) ?? [])))
            for (old, new) in sequence.steps {
                guard let index = schema.entities[entity].attributes.firstIndex(where: { $0.name == old }) else {
                    continue
                }
                schema.entities[entity].attributes[index].name = new
                schema.entities[entity].columns = schema.entities[entity].columns.map { $0 == old ? new : $0 }
                for i in schema.entities[entity].indexes.indices {
                    schema.entities[entity].indexes[i].attributes = schema.entities[entity].indexes[i].attributes.map {
                        $0 == old ? new : $0
                    }
                }
                steps.append(.renameAttribute(entity: entityName, from: old, to: new))
            }
        }
        renameJoins(of: &schema, to: target, steps: &steps)
        return (schema, steps)
    }
}

/// Renames declared together (old name → new name), as steps that run one at a time: each step's
/// new name is free when it runs. A rename that passes a name along waits for the rename that
/// frees it; renames that form a cycle (a swap) go through a temporary name, or are reported in
/// ``cycle`` when there are no temporary names to use (`reserved` is nil).
struct RenameSequence {
    /// The renames in the order they run.
    private(set) var steps: [(from: String, to: String)] = []
    /// The old names of renames that form a cycle, when no temporary name may break it.
    private(set) var cycle: [String]?

    /// - Parameters:
    ///   - wanted: the renames, in the order they are preferred; of two that rename one old name,
    ///     the first is kept.
    ///   - names: the names in use before the renames.
    ///   - reserved: names a temporary name must not take (the model's), or nil when cycles may
    ///     not go through temporary names.
    init(_ wanted: [(from: String, to: String)], names: Set<String>, reserved: Set<String>?) {
        var pending: [(from: String, to: String)] = []
        for pair in wanted
        where pair.from != pair.to && names.contains(pair.from) && !pending.contains(where: { $0.from == pair.from }) {
            pending.append(pair)
        }
        // A new name the store keeps (it is not renamed away) blocks its rename, which is ignored;
        // that can keep the name it would have freed, so repeat until nothing changes.
        while let blocked = pending.firstIndex(where: { pair in
            names.contains(pair.to) && !pending.contains { $0.from == pair.to }
        }) {
            pending.remove(at: blocked)
        }
        var inUse = names
        while !pending.isEmpty {
            if let free = pending.firstIndex(where: { !inUse.contains($0.to) }) {
                let pair = pending.remove(at: free)
                inUse.remove(pair.from)
                inUse.insert(pair.to)
                steps.append(pair)
                continue
            }
            // Every new name left is the old name of another rename left: a cycle.
            guard let reserved else {
                cycle = pending.map(\.from).sorted()
                return
            }
            let old = pending[0].from
            var temporary = "strata_renaming_\(old)"
            var attempt = 2
            while inUse.contains(temporary) || reserved.contains(temporary) {
                temporary = "strata_renaming_\(attempt)_\(old)"
                attempt += 1
            }
            inUse.remove(old)
            inUse.insert(temporary)
            steps.append((from: old, to: temporary))
            pending[0].from = temporary
        }
    }
}
