import StrataStorage

/// Strata's own checks of an open store, from one read snapshot: every row decodes and fits its
/// column, every to-one key names an existing row, every many-to-many link names existing rows
/// and is seen from both ends, every unique index holds, and the history is consistent.
struct StoreChecks {
    let store: OpenedStore
    private var problems: [String] = []
    /// Each entity's keys, as read.
    private var keys: [Set<Int64>] = []

    init(_ store: OpenedStore) {
        self.store = store
    }

    /// Runs every check and returns each problem found.
    func run() -> [String] {
        var checks = self
        do {
            try store.read { reader in
                for entity in store.schema.entities { checks.checkRows(of: entity, reader) }
                for join in store.schema.joins { checks.checkLinks(of: join, reader) }
            }
        } catch {
            checks.problems.append("the store cannot be read: \(ToolError.oneLine(String(describing: error)))")
        }
        checks.checkHistory()
        return checks.problems
    }

    private mutating func checkRows(of entity: EntitySchema, _ reader: any StoreReader) {
        var found: Set<Int64> = []
        var references: [(key: Int64, column: Int, target: Int64)] = []
        let uniques = entity.indexes.filter(\.isUnique)
        var seen: [[[StoredValue]: Int64]] = Array(repeating: [:], count: uniques.count)
        TolerantRowScan(reader: reader, entity: entity.number).run { row in
            found.insert(row.key)
            checkValues(of: row, entity)
            for (column, schema) in entity.columns.enumerated() where schema.type == .reference {
                if column < row.values.count, case .integer(let target) = row.values[column] {
                    references.append((row.key, column, target))
                }
            }
            for (number, index) in uniques.enumerated() {
                let values = index.columns.map { $0 < row.values.count ? row.values[$0] : .null }
                if values.contains(.null) { continue }
                if let other = seen[number][values] {
                    problems.append(
                        """
                        \(entity.name): unique index \(index.name) does not hold: rows \(other) and \(row.key) \
                        both have \(values.map(\.description).joined(separator: ", "))
                        """)
                } else {
                    seen[number][values] = row.key
                }
            }
        } failed: { failure in
            switch failure {
            case .row(let key, let error):
                // The row is there, so keys naming it are not dangling; its values are unknown.
                found.insert(key)
                problems.append(
                    "\(entity.name) \(key): the row does not decode: \(ToolError.oneLine(String(describing: error)))")
            case .entity(let error):
                problems.append("\(entity.name): rows do not decode: \(ToolError.oneLine(String(describing: error)))")
            }
        }
        keys.append(found)
        pendingReferences.append((entity, references))
    }

    private mutating func checkValues(of row: StoredRow, _ entity: EntitySchema) {
        guard row.values.count == entity.columns.count else {
            problems.append(
                "\(entity.name) \(row.key): \(row.values.count) values where the schema has "
                    + "\(entity.columns.count) columns"
            )
            return
        }
        for (column, value) in zip(entity.columns, row.values) {
            if value == .null, !column.isOptional {
                problems.append("\(entity.name) \(row.key): \(column.name) is null but not optional")
            } else if !column.type.storageClass.admits(value) {
                problems.append(
                    "\(entity.name) \(row.key): \(column.name) holds \(value), not a \(column.type.rawValue)")
            }
        }
    }

    /// The to-one keys of each entity read so far, checked once every entity's keys are known.
    private var pendingReferences: [(EntitySchema, [(key: Int64, column: Int, target: Int64)])] = []

    private mutating func checkLinks(of join: JoinSchema, _ reader: any StoreReader) {
        checkReferencesOnce()
        let ends: [(from: JoinSide, to: JoinSide, source: Int, target: Int)] = [
            (.left, .right, join.leftEntity, join.rightEntity), (.right, .left, join.rightEntity, join.leftEntity),
        ]
        do {
            for end in ends {
                let source = store.schema.entities[end.source].name
                let target = store.schema.entities[end.target].name
                for key in keys[end.source].sorted() {
                    for other in try reader.linkedKeys(join: join.number, from: end.from, key: key) {
                        let link = "join \(join.name): \(source) \(key) links \(target) \(other)"
                        if !keys[end.target].contains(other) {
                            problems.append(link + ", which does not exist")
                        } else if try !reader.linkedKeys(join: join.number, from: end.to, key: other).contains(key) {
                            problems.append(link + ", but not the other way round")
                        }
                    }
                }
            }
        } catch {
            problems.append("join \(join.name): links do not read: \(ToolError.oneLine(String(describing: error)))")
        }
    }

    /// Checks the to-one keys gathered by ``checkRows(of:_:)`` against every entity's keys.
    private mutating func checkReferencesOnce() {
        for (entity, references) in pendingReferences {
            for reference in references {
                let column = entity.columns[reference.column]
                guard let target = column.referencedEntity, target < keys.count else { continue }
                if !keys[target].contains(reference.target) {
                    let targetName = store.schema.entities[target].name
                    problems.append(
                        """
                        \(entity.name) \(reference.key): \(column.name) names \(targetName) \(reference.target), \
                        which does not exist
                        """)
                }
            }
        }
        pendingReferences = []
    }

    private mutating func checkHistory() {
        checkReferencesOnce()
        do {
            // Other processes may commit meanwhile, and the history is read in pages: a token read
            // past the current token read before it may be a new commit. Tokens only grow, so the
            // current token read after everything else decides; only those past it are damage.
            let before = try store.engine.currentHistoryToken()
            var previous: Int64 = 0
            var newerThanBefore: [Int64] = []
            try store.forEachHistoryTransaction { transaction in
                if transaction.token <= previous {
                    problems.append("history: token \(transaction.token) comes after token \(previous)")
                }
                if transaction.token > before { newerThanBefore.append(transaction.token) }
                previous = transaction.token
            }
            let cursors = try store.engine.historyCursors().sorted(by: { $0.key < $1.key })
            let current = try store.engine.currentHistoryToken()
            for token in newerThanBefore where token > current {
                problems.append("history: token \(token) is past the current token \(current)")
            }
            for (name, token) in cursors where token > current {
                problems.append("history cursor \(name) is at token \(token), past the current token \(current)")
            }
        } catch {
            problems.append("history does not read: \(ToolError.oneLine(String(describing: error)))")
        }
    }
}
