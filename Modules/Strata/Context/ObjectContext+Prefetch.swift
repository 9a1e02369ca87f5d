import StrataStorage

extension ObjectContext {
    /// Loads a relationship for many objects at once: prefetching, and batch faulting a fetch
    /// result. Objects whose to-many set is loaded already keep it.
    ///
    /// The sets are exactly those one fault per object would load now. A to-many whose foreign
    /// key is on the target reads the target rows of every owner in one streamed plan and
    /// buckets them by foreign key; a many-to-many reads the join once; a to-one registers its
    /// targets. When unsaved changes in this context affect the relationship, each object is
    /// loaded on its own, with the changes merged as a fault merges them.
    func prefetch(_ relation: RelationModel, of owners: [ManagedObject], group: FetchGroup?) throws {
        if let group { _ = group.beginBatch(of: relation.property) }
        guard relation.isToMany else { return try prefetchToOne(relation, of: owners) }
        var pending: [ManagedObject] = []
        for owner in owners where owner.loadedToMany(relation.property) == nil && !owner.state.contains(.prototype) {
            pending.append(owner)
        }
        if pending.isEmpty { return }
        pending.sort { $0.key < $1.key }
        // A context holds one object per stored key, so equal keys are the same object listed
        // twice; unsaved owners (no key yet) come first and have no stored members.
        var stored: [ManagedObject] = []
        for owner in pending where owner.key > 0 && owner.key != stored.last?.key { stored.append(owner) }
        if hasPendingChanges(affecting: relation) || stored.count < 2 {
            for owner in pending {
                owner.installToMany(relation.property, members: try loadRelated(relation, of: owner))
            }
            return
        }
        for owner in pending where owner.key <= 0 { owner.installToMany(relation.property, members: []) }
        let buckets =
            relation.inverseIsToMany
            ? try linkedMembers(relation, of: stored) : try referencingMembers(relation, of: stored)
        for (owner, members) in zip(stored, buckets) { owner.installToMany(relation.property, members: members) }
    }

    /// Whether unsaved changes in this context can change what a to-many loads: changed objects
    /// of its target entity, or pending links of its many-to-many join.
    func hasPendingChanges(affecting relation: RelationModel) -> Bool {
        guard relation.inverseIsToMany else { return hasPendingChanges(relation.target) }
        guard let join = relation.joinName.flatMap(schema.joinNumber) else { return true }
        return pendingLinks.values.contains { $0.join == join }
    }

    /// The members of a to-many whose foreign key is on the target, for owners with permanent
    /// keys in ascending key order, when no target object has unsaved changes: one plan over the
    /// target rows whose foreign key names an owner, bucketed by owner.
    private func referencingMembers(_ relation: RelationModel, of owners: [ManagedObject]) throws -> [[ManagedObject]] {
        let model = relation.target
        let number = try entityNumber(model)
        let column = model.properties[relation.inverseProperty].column!
        let keys = owners.map(\.key)
        let positions = OwnerPositions(keys)
        let reader = try snapshot()
        // When the owners are most rows of their entity, one pass over the whole target table
        // is cheaper than looking up each owner's rows: rows of other owners, or of none, are
        // skipped below before they become objects.
        let ownerTotal = try owners[0].model.map(entityNumber).flatMap {
            reader.expectedRowCount(for: FetchPlan(entity: $0))
        }
        let filter: Filter? =
            if let ownerTotal, owners.count * 2 >= ownerTotal { nil } else {
                .isIn(column: column, values: keys.map(StoredValue.integer))
            }
        // The engine may deliver the rows in any order (it need not sort by key); `bucket` puts
        // each owner's members in key order.
        let plan = FetchPlan(entity: number, filter: filter, inKeyOrder: false)
        var map = IdentityMap()
        swap(&map, &registry[number])
        defer { swap(&map, &registry[number]) }
        var found: [ManagedObject] = []
        var owner: [Int32] = []
        if let estimate = reader.expectedRowCount(for: plan) {
            let expected = min(max(estimate, 0), Self.largestReservation)
            found.reserveCapacity(expected)
            owner.reserveCapacity(expected)
            map.reserveCapacity(map.count + expected)
        }
        let link = self.link
        try reader.forEachRow(for: plan) { row in
            try Self.checkShape(row, of: model)
            guard case .integer(let key) = row.values[column], let position = positions.position(of: key) else {
                return
            }
            found.append(map.object(forKey: row.key) { Self.makeObject(for: row, model: model, link: link) })
            owner.append(Int32(truncatingIfNeeded: position))
        }
        return Self.bucket(found, by: owner, count: owners.count)
    }

    /// The members of a many-to-many, for owners with permanent keys in ascending key order,
    /// when no link of its join is pending: one pass over the join.
    private func linkedMembers(_ relation: RelationModel, of owners: [ManagedObject]) throws -> [[ManagedObject]] {
        guard let joinName = relation.joinName, let join = schema.joinNumber(joinName) else {
            return Array(repeating: [], count: owners.count)
        }
        let keys = owners.map(\.key)
        let positions = OwnerPositions(keys)
        var linked: [Int64] = []
        var owner: [Int32] = []
        try snapshot().forEachLink(join: join, from: relation.isJoinLeft ? .left : .right, keys: keys) { key, other in
            guard let position = positions.position(of: key) else { return }
            linked.append(other)
            owner.append(Int32(truncatingIfNeeded: position))
        }
        var found: [ManagedObject] = []
        var kept: [Int32] = []
        found.reserveCapacity(linked.count)
        kept.reserveCapacity(linked.count)
        for (key, position) in zip(linked, owner) {
            if let object = try object(model: relation.target, key: key) {
                found.append(object)
                kept.append(position)
            }
        }
        return Self.bucket(found, by: kept, count: owners.count)
    }

    /// Registers the targets of a to-one relationship of `owners`, so that reading it is a
    /// look-up in the identity map.
    private func prefetchToOne(_ relation: RelationModel, of owners: [ManagedObject]) throws {
        guard let column = owners.first?.model?.properties[relation.property].column else { return }
        var keys: [Int64] = []
        for owner in owners where owner.sideState?[toOne: relation.property] == nil {
            if case .integer(let key) = owner.values[column] { keys.append(key) }
        }
        keys.sort()
        var previous: Int64?
        for key in keys where key != previous {
            previous = key
            _ = try object(model: relation.target, key: key)
        }
    }

    /// `objects` split by owner position, each owner's in key order (the order one fault gives);
    /// every owner's array is allocated once, at its final size. Engines deliver each owner's
    /// rows in key order in practice, so the check for it is all the sorting costs.
    private static func bucket(_ objects: [ManagedObject], by owner: [Int32], count: Int) -> [[ManagedObject]] {
        var sizes = [Int](repeating: 0, count: count)
        for position in owner { sizes[Int(position)] += 1 }
        var buckets: [[ManagedObject]] = sizes.map { size in
            var bucket: [ManagedObject] = []
            bucket.reserveCapacity(size)
            return bucket
        }
        for (object, position) in zip(objects, owner) { buckets[Int(position)].append(object) }
        for index in buckets.indices where !buckets[index].isInKeyOrder {
            buckets[index].sort { $0.key < $1.key }
        }
        return buckets
    }
}

extension Array where Element == ManagedObject {
    /// Whether the objects' keys ascend.
    fileprivate var isInKeyOrder: Bool {
        var previous = Int64.min
        for object in self {
            if object.key < previous { return false }
            previous = object.key
        }
        return true
    }
}
