import Foundation
import StrataStorage

extension ObjectContext {
    /// Fetches the objects a request selects, as this context sees them (unsaved changes included).
    ///
    /// The predicate compiles to an engine filter where possible; the rest runs in memory with
    /// the same semantics (see ``FetchRequest``). Call inside `perform`.
    ///
    /// ```swift
    /// let rich = try context.fetch(FetchRequest<Account>(predicate: #Predicate { $0.balance > 1_000 }))
    /// ```
    /// Offsets and limits: any value from 0 to `Int.max` is valid (an offset past the last
    /// result gives no results, a limit past it gives the rest); a negative `fetchOffset` or
    /// `fetchLimit` is refused with `.misuse`.
    ///
    /// - Returns: objects valid only inside this `perform`; do not store them.
    /// Relationships listed in `relationshipKeyPathsForPrefetching` are loaded for every result
    /// before it returns; a to-many faulted later on one result is loaded for all of them (batch
    /// faulting). Either way the members are those one fault per object would load.
    ///
    /// - Throws: `.misuse` outside `perform`, for a negative `fetchOffset` or `fetchLimit`, for a
    ///   prefetching key path that is not a relationship of the entity, and for an entity class
    ///   that is not in the container's schema (the message names the class and the schema's
    ///   entities); ``StrataStorage/StrataError/invalidURI(_:reason:)`` for a relationship-key
    ///   predicate (`$0.$account == id`, `ids.contains($0.$account)`) whose ID is of another
    ///   store (`.otherStore`), of an entity other than the relationship's target
    ///   (`.unknownEntity`), or unsaved (`.temporary`); errors a predicate throws while evaluated
    ///   in memory; and engine errors (`.storeCorrupt`, `.busy`, `.io`).
    public func fetch<Entity: ManagedObject>(_ request: FetchRequest<Entity>) throws -> [Entity] {
        try checkInside("ObjectContext.fetch(_:)")
        let query = try FetchQuery(request, context: self)
        let objects = try run(query)
        var group: FetchGroup?
        if objects.count > 1 && query.model.hasToMany {
            group = FetchGroup(objects)
            self.objects.setFetchGroup(group, of: query.number)
        }
        for relation in query.prefetch { try prefetch(relation, of: objects, group: group) }
        // Every object a query returns was made from the request's model, whose class is exactly
        // `Entity`. Working on `[ManagedObject]` keeps the per-row loop free of generic metadata.
        return ExactCast.array(objects, as: Entity.self)
    }

    /// Counts the objects a request selects (limit and offset apply).
    /// - Throws: as ``fetch(_:)``.
    public func count<Entity: ManagedObject>(for request: FetchRequest<Entity>) throws -> Int {
        try checkInside("ObjectContext.count(for:)")
        let query = try FetchQuery(request, context: self)
        if query.isExact && query.memorySort == nil {
            // The store counts; the context's unsaved objects are added when they are all new
            // (none of the entity's stored rows changed or was deleted), the common case of a
            // count after an insert in the same unit of work.
            let unsaved = hasPendingChanges(query.model) ? try countOfUnsavedInsertsOnly(query) : 0
            if let unsaved {
                let stored = try snapshot().count(entity: query.number, filter: query.pushdown)
                let (total, overflow) = max(stored, 0).addingReportingOverflow(unsaved)
                return FetchPlan.windowRange(
                    count: overflow ? Int.max : total, offset: query.offset, limit: query.limit
                ).count
            }
        }
        return try run(query).count
    }

    /// How many of this context's inserted objects of the query's entity match it, or nil when
    /// the context also changed or deleted stored rows of that entity, whose stored values the
    /// store's count would still judge: then only the slow path gives the right answer.
    private func countOfUnsavedInsertsOnly(_ query: FetchQuery) throws -> Int? {
        let model = query.model
        for list in [updated, deleted, relationDirty] {
            for object in list where object.model === model && !object.state.contains(.inserted) { return nil }
        }
        var count = 0
        for object in inserted where object.model === model && object.state.isDisjoint(with: [.deleted, .gone]) {
            if try query.matches(object) { count += 1 }
        }
        return count
    }

    /// Runs a query: every result is an instance of the query model's class.
    private func run(_ query: FetchQuery) throws -> [ManagedObject] {
        let model = query.model
        let number = query.number
        if query.isExact && query.memorySort == nil && !hasPendingChanges(model) {
            // No store holds more than Int.max rows: a limit reaching past that is cut to fit, so
            // that offset + limit never overflows, in the core or in an engine.
            let limit = query.limit.map { min($0, Int.max - query.offset) }
            let plan = FetchPlan(
                entity: number, filter: query.pushdown, sort: query.sortKeys, limit: limit, offset: query.offset)
            return try fetchExact(plan, model: model, limit: query.limit)
        }
        // Slow path: the store's candidates plus this context's changed objects, judged in memory.
        let plan = FetchPlan(entity: number, filter: query.pushdown, sort: query.sortKeys)
        var seen = Set<ObjectIdentifier>()
        var candidates: [ManagedObject] = []
        for row in try snapshot().rows(for: plan) {
            let object = try materialize(row, model: model, number: number)
            if seen.insert(ObjectIdentifier(object)).inserted { candidates.append(object) }
        }
        for object in inserted + updated + relationDirty where object.model === model {
            if seen.insert(ObjectIdentifier(object)).inserted { candidates.append(object) }
        }
        var matches: [ManagedObject] = []
        for object in candidates where object.state.isDisjoint(with: [.deleted, .gone]) {
            if try query.matches(object) { matches.append(object) }
        }
        query.sort(&matches)
        return Array(matches[FetchPlan.windowRange(count: matches.count, offset: query.offset, limit: query.limit)])
    }

    /// The objects for the rows of a plan that needs no correction by unsaved changes (no
    /// changes to its entity in this context): rows stream from the engine straight into the
    /// identity map, in the plan's order. Fetches and relationship faults both come here.
    func fetchExact(_ plan: FetchPlan, model: EntityModel, limit: Int? = nil) throws -> [ManagedObject] {
        let number = plan.entity
        let reader = try snapshot()
        // The entity's map is moved out for the loop, so that registering each row touches a
        // uniquely held local instead of the context's array of maps. Rows stream in: each
        // becomes an object while its values are still in the cache.
        var map = IdentityMap()
        swap(&map, &registry[number])
        defer { swap(&map, &registry[number]) }
        var objects: [ManagedObject] = []
        if let estimate = reader.expectedRowCount(for: plan) {
            // An estimate from the engine: clamped, so a wild one cannot trap or exhaust memory.
            let expected = min(max(estimate, 0), limit ?? Int.max, Self.largestReservation)
            objects.reserveCapacity(expected)
            map.reserveCapacity(map.count + expected)
        }
        let link = self.link
        try reader.forEachRow(for: plan) { row in
            try Self.checkShape(row, of: model)
            let object = map.object(forKey: row.key) { Self.makeObject(for: row, model: model, link: link) }
            objects.append(object)
        }
        return objects
    }

    /// The most results a fetch reserves room for up front, whatever the engine estimates.
    static let largestReservation = 1 << 20

    /// Whether this context holds unsaved changes to objects of an entity.
    func hasPendingChanges(_ model: EntityModel) -> Bool {
        objects.hasChanges(to: model)
    }

    /// Whether the next save would write changes to `model`'s rows: ``hasPendingChanges(_:)``
    /// without the objects inserted and deleted again before it, which are never written. For
    /// the refusals of set-based work, which must not count them; fetches may (they only take
    /// the slower path that reads the context's objects).
    func hasWrittenChanges(_ model: EntityModel) -> Bool {
        guard hasPendingChanges(model) else { return false }
        func written(_ object: ManagedObject) -> Bool {
            object.model === model && !object.state.isSuperset(of: [.inserted, .deleted])
        }
        return inserted.contains(where: written) || updated.contains(where: written)
            || deleted.contains(where: written) || relationDirty.contains(where: written)
    }
}

/// A fetch request compiled against one entity.
struct FetchQuery {
    let model: EntityModel
    let number: Int
    let node: FilterNode?
    let pushdown: Filter?
    let sortKeys: [SortKey]
    /// Set when some sort descriptor is not a plain attribute: sort with Foundation in memory.
    let memorySort: ((ManagedObject, ManagedObject) -> ComparisonResult)?
    let limit: Int?
    let offset: Int
    /// The relationships to load for every result (``FetchRequest/relationshipKeyPathsForPrefetching``).
    let prefetch: [RelationModel]
    private let bindings: (ManagedObject) -> PredicateBindings

    var isExact: Bool { node == nil || node?.pureFilter != nil }

    init<Entity: ManagedObject>(_ request: FetchRequest<Entity>, context: ObjectContext) throws {
        guard let model = context.schemaModel(of: Entity.self) else {
            throw context.notInSchema(Entity.entityName, type: Entity.self)
        }
        self.model = model
        number = try context.entityNumber(model)
        if request.fetchOffset < 0 {
            throw StrataError.misuse(
                """
                FetchRequest<\(Entity.entityName)>.fetchOffset is \(request.fetchOffset); an offset must be 0 or \
                more (0 skips nothing).
                """
            )
        }
        if let limit = request.fetchLimit, limit < 0 {
            throw StrataError.misuse(
                """
                FetchRequest<\(Entity.entityName)>.fetchLimit is \(limit); a limit must be 0 or more, or nil for \
                no limit.
                """
            )
        }
        limit = request.fetchLimit
        offset = request.fetchOffset
        prefetch = try request.relationshipKeyPathsForPrefetching.map { keyPath throws(StrataError) in
            guard let property = model.propertyIndex(forKeyPath: keyPath), let relation = model.relations[property]
            else {
                let example = model.properties.first { $0.isRelationship }.map { " such as \\.\($0.name)" } ?? ""
                throw StrataError.misuse(
                    """
                    FetchRequest<\(Entity.entityName)>.relationshipKeyPathsForPrefetching lists \(keyPath), which is \
                    not a relationship of \(Entity.entityName); list only its relationship properties\(example).
                    """
                )
            }
            return relation
        }
        if let predicate = request.predicate {
            let compiled = try PredicateCompiler.compile(predicate, model: model, checkingReferencesWith: context)
            node = compiled
            pushdown = compiled.impliedFilter
            bindings = { PredicateBindings((predicate.variable, ExactCast.object($0, as: Entity.self))) }
        } else {
            node = nil
            pushdown = nil
            bindings = { _ in PredicateBindings() }
        }
        // Per descriptor, the stored column it sorts by, or nil: relationships, computed
        // properties, and raw-value and Codable attributes (whose order is their type's own, not
        // their stored values') sort with Foundation.
        let keys: [SortKey?] = request.sortBy.map { descriptor in
            guard let keyPath = descriptor.keyPath, let property = model.propertyIndex(forKeyPath: keyPath),
                let column = model.properties[property].column, !model.properties[property].isRelationship,
                case .scalar = model.valueKind(ofColumn: column)
            else { return nil }
            return SortKey(column: column, ascending: descriptor.order == .forward)
        }
        if keys.contains(where: { $0 == nil }) {
            // The whole sort runs in memory; a descriptor of a stored column keeps the engine's
            // order (texts by UTF-8 bytes) whatever the descriptors beside it.
            let descriptors = Array(zip(request.sortBy, keys))
            sortKeys = []
            memorySort = { lhs, rhs in
                for (descriptor, key) in descriptors {
                    let order: ComparisonResult
                    if let key {
                        let stored = StoredValue.order(lhs.values[key.column], rhs.values[key.column])
                        order =
                            key.ascending || stored == .orderedSame
                            ? stored : stored == .orderedAscending ? .orderedDescending : .orderedAscending
                    } else {
                        order = descriptor.compare(
                            ExactCast.object(lhs, as: Entity.self), ExactCast.object(rhs, as: Entity.self))
                    }
                    if order != .orderedSame { return order }
                }
                return .orderedSame
            }
        } else {
            sortKeys = keys.compactMap { $0 }
            memorySort = nil
        }
    }

    func matches(_ object: ManagedObject) throws -> Bool {
        guard let node else { return true }
        return try node.matches(object, bindings: bindings(object))
    }

    /// Sorts in memory with the engine's order: sort keys, then primary key (unsaved objects last).
    func sort(_ objects: inout [ManagedObject]) {
        let keys = sortKeys
        let custom = memorySort
        objects.sort { lhs, rhs in
            if let custom {
                let order = custom(lhs, rhs)
                if order != .orderedSame { return order == .orderedAscending }
            } else {
                for key in keys {
                    let order = StoredValue.order(lhs.values[key.column], rhs.values[key.column])
                    if order != .orderedSame { return key.ascending == (order == .orderedAscending) }
                }
            }
            let leftKey = lhs.key > 0 ? lhs.key : Int64.max
            let rightKey = rhs.key > 0 ? rhs.key : Int64.max
            if leftKey != rightKey { return leftKey < rightKey }
            return lhs.temporarySerial < rhs.temporarySerial
        }
    }
}
