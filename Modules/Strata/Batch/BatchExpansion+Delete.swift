import StrataStorage

extension BatchExpansion {
    /// Deletes the selected rows and applies the delete rules set-wise, one wave of rows at a
    /// time: cascade deletes the related rows (the next wave), nullify clears their links, deny
    /// refuses the whole save, naming the rows that deny.
    mutating func run(_ batch: StagedDelete) throws {
        let schema = context.schema
        var result = BatchResult(kind: .delete, entityName: batch.model.name, storeIdentifier: storeIdentifier)
        var issues: [ValidationIssue] = []
        // Rows deleted by this batch whose to-one deny rule must find its target deleted too.
        var toOneDenials: [(number: Int, key: Int64, relation: RelationModel, target: Int64)] = []
        var wave: [(number: Int, rows: [(key: Int64, row: Row)])] = [
            (batch.number, try select(batch.number, filter: batch.filter))
        ]
        markDeleted(wave[0].rows, number: batch.number, result: &result)
        while !wave.isEmpty {
            var next: [Int: [(key: Int64, row: Row)]] = [:]
            for (number, deleted) in wave where !deleted.isEmpty {
                let model = schema.models[number]
                let keys = deleted.map(\.key)
                for case let relation? in model.relations {
                    guard let targetNumber = schema.number(of: relation.target) else { continue }
                    let target = relation.target
                    let property = model.properties[relation.property].name
                    if relation.isToMany && !relation.inverseIsToMany {
                        // The related rows hold the foreign key.
                        let column = target.column(ofProperty: relation.inverseProperty)
                        let related = try select(targetNumber, column: column, in: keys)
                        guard !related.isEmpty else { continue }
                        switch relation.deleteRule {
                        case .deny:
                            issues.append(
                                denial(model, property: property, target: target, holders: related, column: column))
                        case .cascade:
                            next[targetNumber, default: []].append(contentsOf: related)
                        case .nullify:
                            for (key, found) in related {
                                var row = found
                                row.values[column] = .null
                                set(targetNumber, key, row)
                                result.note(key, entity: target.name, in: \.updated)
                            }
                        }
                    } else if relation.isToMany {
                        // Many-to-many: the engine drops the join rows of deleted rows itself.
                        guard relation.deleteRule != .nullify, let joinName = relation.joinName,
                            let join = schema.joinNumber(joinName)
                        else { continue }
                        var linked: [Int64] = []
                        var holders: [Int64] = []
                        try reader.forEachLink(
                            join: join, from: relation.isJoinLeft ? .left : .right, keys: keys.sorted()
                        ) { key, other in
                            if holders.last != key { holders.append(key) }
                            linked.append(other)
                        }
                        guard !linked.isEmpty else { continue }
                        if relation.deleteRule == .deny {
                            issues.append(
                                ValidationIssue(
                                    entity: model.name, property: property,
                                    message: """
                                        \(named(number, holders)): cannot delete while related \(target.name) \
                                        objects exist (deny rule); nothing was deleted
                                        """))
                        } else {
                            for key in Set(linked).sorted() {
                                if let row = try row(targetNumber, key: key) {
                                    next[targetNumber, default: []].append((key, row))
                                }
                            }
                        }
                    } else {
                        // To-one: this row holds the foreign key.
                        let column = model.column(ofProperty: relation.property)
                        if !relation.inverseIsToMany {
                            // One-to-one: the other side's key back to these rows is cleared.
                            let inverseColumn = target.column(ofProperty: relation.inverseProperty)
                            if inverseColumn >= 0 {
                                for (key, found) in try select(targetNumber, column: inverseColumn, in: keys) {
                                    var row = found
                                    row.values[inverseColumn] = .null
                                    set(targetNumber, key, row)
                                    result.note(key, entity: target.name, in: \.updated)
                                }
                            }
                        }
                        for (key, found) in deleted {
                            guard case .integer(let targetKey) = found.values[column] else { continue }
                            switch relation.deleteRule {
                            case .deny: toOneDenials.append((number, key, relation, targetKey))
                            case .cascade:
                                if let row = try row(targetNumber, key: targetKey) {
                                    next[targetNumber, default: []].append((targetKey, row))
                                }
                            case .nullify: break
                            }
                        }
                    }
                }
            }
            wave = []
            for (number, candidates) in next.sorted(by: { $0.key < $1.key }) {
                var fresh: [(key: Int64, row: Row)] = []
                var seen = Set<Int64>()
                for candidate in candidates where seen.insert(candidate.key).inserted {
                    if let current = rows[number]?[candidate.key], current.isDeleted { continue }
                    fresh.append((candidate.key, rows[number]?[candidate.key] ?? candidate.row))
                }
                markDeleted(fresh, number: number, result: &result)
                if !fresh.isEmpty { wave.append((number, fresh)) }
            }
        }
        for denial in toOneDenials {
            guard let targetNumber = schema.number(of: denial.relation.target),
                try row(targetNumber, key: denial.target) != nil
            else { continue }
            let model = schema.models[denial.number]
            issues.append(
                ValidationIssue(
                    entity: model.name, property: model.properties[denial.relation.property].name,
                    message: """
                        \(objectID(denial.number, denial.key).uriString): cannot delete while it refers to a \
                        \(denial.relation.target.name) (deny rule); nothing was deleted
                        """))
        }
        if !issues.isEmpty { throw StrataError.validation(issues) }
        results.append(result)
    }

    private mutating func markDeleted(_ deleted: [(key: Int64, row: Row)], number: Int, result: inout BatchResult) {
        let name = context.schema.models[number].name
        for (key, found) in deleted {
            var row = found
            row.isDeleted = true
            set(number, key, row)
            result.note(key, entity: name, in: \.deleted)
        }
    }

    /// A deny issue naming the rows whose related rows exist.
    private func denial(
        _ model: EntityModel, property: String, target: EntityModel, holders related: [(key: Int64, row: Row)],
        column: Int
    ) -> ValidationIssue {
        var holders: [Int64] = []
        var seen = Set<Int64>()
        for (_, row) in related {
            if case .integer(let key) = row.values[column], seen.insert(key).inserted { holders.append(key) }
        }
        let number = context.schema.number(of: model) ?? 0
        return ValidationIssue(
            entity: model.name, property: property,
            message: """
                \(named(number, holders.sorted())): cannot delete while \(related.count) related \(target.name) \
                object(s) exist (deny rule); nothing was deleted
                """)
    }

    /// The URIs of up to five rows, and how many more.
    private func named(_ number: Int, _ keys: [Int64]) -> String {
        let shown = keys.prefix(5).map { objectID(number, $0).uriString }.joined(separator: ", ")
        return keys.count > 5 ? "\(shown) and \(keys.count - 5) more" : shown
    }
}
