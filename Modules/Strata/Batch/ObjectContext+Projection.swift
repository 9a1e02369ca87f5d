import StrataStorage

extension ObjectContext {
    /// Fetches chosen attributes of the objects a request selects, as typed tuples, without
    /// building objects: the engine reads the rows and only the values leave it.
    ///
    /// The request's predicate, sort descriptors (on stored attributes), limit and offset apply as
    /// in ``fetch(_:)``. The values are `Sendable`, so they may leave `perform`.
    ///
    /// ```swift
    /// let balances: [(String, Int64)] = try context.fetchValues(FetchRequest<Account>(), \.name, \.balance)
    /// ```
    ///
    /// Isolation: the same snapshot as the rest of the `perform`; it refuses to run while this
    /// context has unsaved changes (or staged batches) for the entity, which it would not see.
    /// - Throws: `.misuse` outside `perform`, with unsaved changes to the entity, for a predicate
    ///   or sort the engine cannot run, or a key path that is not a stored attribute;
    ///   `.undecodableValue` for a stored value its type does not accept; engine errors.
    public func fetchValues<Model: ManagedObject, each Value: AttributeValue>(
        _ request: FetchRequest<Model>, _ keyPaths: repeat KeyPath<Model, each Value>
    ) throws -> [(repeat each Value)] {
        try checkInside("ObjectContext.fetchValues(_:_:)")
        let (model, plan) = try projectionPlan(request, call: "fetchValues")
        var columns: [Int] = []
        for keyPath in repeat each keyPaths {
            let column = try storedColumn(keyPath, model: model, call: "fetchValues")
            if model.properties[model.columnProperties[column]].isRelationship {
                throw StrataError.misuse(
                    """
                    fetchValues over \(model.name) was given \(keyPath), a relationship; project attributes, and \
                    read related objects' IDs with fetchObjectIDs or aggregate(…groupedBy:)
                    """)
            }
            columns.append(column)
        }
        var result: [(repeat each Value)] = []
        try snapshot().forEachRow(for: plan) { row in
            var decoder = ProjectionDecoder(row: row, columns: columns, model: model)
            result.append((repeat try decoder.next((each Value).self)))
        }
        return result
    }

    /// Fetches the IDs of the objects a request selects, without building objects.
    ///
    /// The request's predicate, sort descriptors (on stored attributes), limit and offset apply as
    /// in ``fetch(_:)``. IDs are `Sendable` and may leave `perform`.
    ///
    /// ```swift
    /// let page = try context.fetchObjectIDs(FetchRequest<Account>(sortBy: [SortDescriptor(\.name)], fetchLimit: 50))
    /// ```
    /// - Throws: as ``fetchValues(_:_:)``.
    public func fetchObjectIDs<Model: ManagedObject>(_ request: FetchRequest<Model>) throws -> [ObjectID] {
        try checkInside("ObjectContext.fetchObjectIDs(_:)")
        let (model, plan) = try projectionPlan(request, call: "fetchObjectIDs")
        var ids: [ObjectID] = []
        let storeID = storeIdentifier
        try snapshot().forEachRow(for: plan) { row in
            ids.append(ObjectID(storeIdentifier: storeID, entityName: model.name, primaryKey: row.key))
        }
        return ids
    }

    /// The plan of a projection: the request's filter, sort and window, all run by the engine.
    private func projectionPlan<Model: ManagedObject>(
        _ request: FetchRequest<Model>, call: String
    ) throws -> (EntityModel, FetchPlan) {
        let (model, number) = try setBasedTarget(Model.self, call: call)
        let query = try FetchQuery(request, context: self)
        let filter = try engineFilter(of: query, call: call)
        guard query.memorySort == nil else {
            throw StrataError.misuse(
                """
                \(call) over \(model.name): a sort descriptor orders by a relationship, a computed value or a \
                Codable/raw-value attribute, which the engine cannot sort; sort by stored attributes, or sort the \
                values yourself
                """)
        }
        let limit = query.limit.map { min($0, Int.max - query.offset) }
        return (
            model, FetchPlan(entity: number, filter: filter, sort: query.sortKeys, limit: limit, offset: query.offset)
        )
    }
}

/// Decodes one projected row's values in key-path order.
private struct ProjectionDecoder {
    let row: StoredRow
    let columns: [Int]
    let model: EntityModel
    var index = 0

    init(row: StoredRow, columns: [Int], model: EntityModel) {
        self.row = row
        self.columns = columns
        self.model = model
    }

    mutating func next<Value: AttributeValue>(_ type: Value.Type) throws -> Value {
        let column = columns[index]
        index += 1
        guard column < row.values.count, let value = Value(storedValue: row.values[column]) else {
            throw StrataError.undecodableValue(
                entity: model.name, attribute: model.properties[model.columnProperties[column]].name, key: row.key,
                reason: "the stored value \(RecordedValue(row.values[column])) does not decode as \(Value.self)")
        }
        return value
    }
}
