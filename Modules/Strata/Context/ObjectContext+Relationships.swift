import StrataStorage

extension ObjectContext {
    /// The loaded set of a to-many relationship, read on its first access (a fault).
    ///
    /// When `owner` is one of the results of the latest fetch of its entity, the relationship is
    /// loaded for every result of that fetch in one read (batch faulting), and `owner`'s set is
    /// among them; otherwise, and while unsaved changes affect the relationship (which a batch
    /// could only merge owner by owner), for `owner` alone.
    func faultToMany(_ relation: RelationModel, of owner: ManagedObject) throws -> RelatedSet {
        if owner.key > 0, let model = owner.model, let number = schema.number(of: model),
            let group = objects.fetchGroup(of: number), !hasPendingChanges(affecting: relation), group.contains(owner),
            group.beginBatch(of: relation.property)
        {
            try prefetch(relation, of: group.objects, group: nil)
            if let loaded = owner.loadedToMany(relation.property) { return loaded }
        }
        return RelatedSet(try loadRelated(relation, of: owner))
    }

    /// Loads the members of a to-many relationship: the store's view from the snapshot,
    /// corrected by this context's unsaved relationship changes.
    func loadRelated(_ relation: RelationModel, of owner: ManagedObject) throws -> [ManagedObject] {
        let targetNumber = try entityNumber(relation.target)
        if relation.inverseIsToMany {
            return try loadLinked(relation, of: owner, targetNumber: targetNumber)
        }
        let inverseColumn = relation.target.properties[relation.inverseProperty].column!
        let plan = FetchPlan(
            entity: targetNumber, filter: .compare(column: inverseColumn, .equal, .integer(owner.key)))
        if owner.key > 0 && !hasPendingChanges(relation.target) {
            // Nothing of the target entity changed here: the members are exactly the rows whose
            // foreign key names the owner, as the index gives them (no re-check, no merge).
            return try fetchExact(plan, model: relation.target)
        }
        var members: [ManagedObject] = []
        var seen = Set<ObjectIdentifier>()
        func pointsAtOwner(_ object: ManagedObject) -> Bool {
            if let cached = object.sideState?[toOne: relation.inverseProperty] { return cached === owner }
            return owner.key > 0 && object.values[inverseColumn] == .integer(owner.key)
        }
        if owner.key > 0 {
            for row in try snapshot().rows(for: plan) {
                let object = try materialize(row, model: relation.target, number: targetNumber)
                if pointsAtOwner(object) && seen.insert(ObjectIdentifier(object)).inserted { members.append(object) }
            }
        }
        for object in relationDirty where object.model === relation.target && !object.state.contains(.gone) {
            if pointsAtOwner(object) && seen.insert(ObjectIdentifier(object)).inserted { members.append(object) }
        }
        return members
    }

    func loadLinked(
        _ relation: RelationModel, of owner: ManagedObject, targetNumber: Int
    ) throws -> [ManagedObject] {
        guard let joinName = relation.joinName, let join = schema.joinNumber(joinName) else { return [] }
        var members: [ManagedObject] = []
        if owner.key > 0 {
            let side: JoinSide = relation.isJoinLeft ? .left : .right
            for key in try snapshot().linkedKeys(join: join, from: side, key: owner.key) {
                if let object = try object(model: relation.target, key: key) { members.append(object) }
            }
        }
        for change in pendingLinks.values where change.join == join {
            let (mine, theirs) = relation.isJoinLeft ? (change.left, change.right) : (change.right, change.left)
            guard mine === owner else { continue }
            if change.isLink {
                if !members.contains(where: { $0 === theirs }) { members.append(theirs) }
            } else {
                members.removeAll { $0 === theirs }
            }
        }
        return members
    }

    /// Records a many-to-many link or unlink; an unlink cancels a pending link and vice versa.
    func recordJoinChange(_ relation: RelationModel, owner: ManagedObject, member: ManagedObject, isLink: Bool) {
        guard let joinName = relation.joinName, let join = schema.joinNumber(joinName) else { return }
        let (left, right) = relation.isJoinLeft ? (owner, member) : (member, owner)
        let key = JoinChangeKey(join: join, left: ObjectIdentifier(left), right: ObjectIdentifier(right))
        if let pending = pendingLinks[key], pending.isLink != isLink {
            pendingLinks[key] = nil
        } else {
            pendingLinks[key] = JoinChange(join: join, left: left, right: right, isLink: isLink)
        }
    }
}
