import StrataStorage

extension ObjectContext {
    /// Computes aggregates over the objects a request selects, per group, in the engine: no
    /// objects are built and memory grows with the number of groups, not rows.
    ///
    /// Group by attributes or to-one relationships (a group value is then the target's
    /// ``AggregateValue/objectID``); groups come in ascending order of their values, nil first.
    /// Without `groupedBy` the result is one group, even over no rows. The request's predicate
    /// must be one the engine runs whole; its sort descriptors are ignored.
    ///
    /// Isolation: it reads the same snapshot as the rest of the `perform`. It does not see unsaved
    /// changes, so it refuses to run while this context has unsaved changes (or staged batches)
    /// for the entity: save first, or aggregate in a fresh context.
    ///
    /// ```swift
    /// let perCurrency = try context.aggregate(
    ///     FetchRequest<Account>(), groupedBy: [\.currency], [.count, .sum(\.balance)])
    /// ```
    /// - Throws: `.misuse` outside `perform`, with unsaved changes to the entity, for a fetch limit
    ///   or offset, a predicate the engine cannot run, a key path that is not an attribute or
    ///   to-one relationship; `.validation` for an integer sum past `Int64`; engine errors.
    public func aggregate<Model: ManagedObject>(
        _ request: FetchRequest<Model>, groupedBy groups: [any PartialKeyPath<Model> & Sendable] = [],
        _ functions: [Aggregate<Model>]
    ) throws -> [AggregateResult] {
        try checkInside("ObjectContext.aggregate(_:groupedBy:_:)")
        let (model, number, filter) = try setBasedRead(request, call: "aggregate", allowsWindow: false)
        let groupColumns = try groups.map { try storedColumn($0, model: model, call: "aggregate") }
        let functionColumns = try functions.map { function in
            try function.keyPath.map { try storedColumn($0, model: model, call: "aggregate") }
        }
        let plan = AggregatePlan(
            entity: number, filter: filter, groupBy: groupColumns,
            functions: zip(functions, functionColumns).map { $0.storageFunction(column: $1) })
        let rows: [AggregateRow]
        do {
            rows = try snapshot().aggregate(plan)
        } catch StrataError.validation(let issues)
            where issues.contains(where: {
                $0.message == AggregateAccumulator.sumOverflowMessage
            })
        {
            throw StrataError.validation(
                issues.map { issue in
                    guard issue.message == AggregateAccumulator.sumOverflowMessage, let column = Int(issue.property),
                        column >= 0, column < model.columnCount
                    else { return issue }
                    return ValidationIssue(
                        entity: model.name, property: columnName(column, model),
                        message: "the sum is beyond the range of a 64-bit integer; aggregate a narrower set of rows")
                })
        }
        let storeID = storeIdentifier
        func describe(_ value: StoredValue, column: Int?, function: Aggregate<Model>.Function?) -> AggregateValue {
            let entity = schema.storeSchema.entities[number]
            switch function {
            case .count?, .countValues?:
                return AggregateValue(value, type: .int64, storeIdentifier: storeID, target: nil)
            case .average?:
                return AggregateValue(value, type: .double, storeIdentifier: storeID, target: nil)
            case .sum?:
                guard let column else {
                    return AggregateValue(value, type: .int64, storeIdentifier: storeID, target: nil)
                }
                let type = entity.columns[column].type
                var normalised = value
                if type.storageClass == .real, case .integer(let number) = value { normalised = .real(Double(number)) }
                return AggregateValue(normalised, type: type, storeIdentifier: storeID, target: nil)
            default:
                guard let column else { return AggregateValue(value, type: nil, storeIdentifier: storeID, target: nil) }
                let schemaColumn = entity.columns[column]
                let target = schemaColumn.referencedEntity.map { schema.models[$0].name }
                return AggregateValue(value, type: schemaColumn.type, storeIdentifier: storeID, target: target)
            }
        }
        return rows.map { row in
            AggregateResult(
                group: zip(row.group, groupColumns).map { describe($0, column: $1, function: nil) },
                values: row.values.indices.map { index in
                    describe(row.values[index], column: functionColumns[index], function: functions[index].function)
                })
        }
    }

    /// The sum of a numeric attribute over the objects a request selects (0 when there are none),
    /// computed in the engine. See ``aggregate(_:groupedBy:_:)`` for isolation and errors.
    ///
    /// ```swift
    /// let total: Int64 = try context.sum(\.balance, of: FetchRequest<Account>())
    /// ```
    public func sum<Model: ManagedObject, Value: AttributeValue & Numeric>(
        _ keyPath: any KeyPath<Model, Value> & Sendable, of request: FetchRequest<Model>
    ) throws -> Value {
        let value = try aggregate(request, [.sum(keyPath)])[0].values[0]
        return value.value(as: Value.self) ?? .zero
    }

    /// The smallest non-nil value of an attribute over the objects a request selects, or nil.
    /// See ``aggregate(_:groupedBy:_:)``.
    ///
    /// ```swift
    /// let first: String? = try context.minimum(\.name, of: FetchRequest<Account>())
    /// ```
    public func minimum<Model: ManagedObject, Value: AttributeValue>(
        _ keyPath: any KeyPath<Model, Value> & Sendable, of request: FetchRequest<Model>
    ) throws -> Value? {
        try aggregate(request, [.minimum(keyPath)])[0].values[0].value(as: Value.self)
    }

    /// The largest non-nil value of an attribute over the objects a request selects, or nil.
    /// See ``aggregate(_:groupedBy:_:)``.
    ///
    /// ```swift
    /// let richest: Int64? = try context.maximum(\.balance, of: FetchRequest<Account>())
    /// ```
    public func maximum<Model: ManagedObject, Value: AttributeValue>(
        _ keyPath: any KeyPath<Model, Value> & Sendable, of request: FetchRequest<Model>
    ) throws -> Value? {
        try aggregate(request, [.maximum(keyPath)])[0].values[0].value(as: Value.self)
    }

    /// The mean of a numeric attribute over the objects a request selects, or nil when there are
    /// none. See ``aggregate(_:groupedBy:_:)``.
    ///
    /// ```swift
    /// let mean: Double? = try context.average(\.balance, of: FetchRequest<Account>())
    /// ```
    public func average<Model: ManagedObject, Value: AttributeValue & Numeric>(
        _ keyPath: any KeyPath<Model, Value> & Sendable, of request: FetchRequest<Model>
    ) throws -> Double? {
        try aggregate(request, [.average(keyPath)])[0].values[0].double
    }

    /// The model, entity number and engine filter of a set-based read, refused while the context
    /// has unsaved changes or staged batches for the entity.
    func setBasedRead<Model: ManagedObject>(
        _ request: FetchRequest<Model>, call: String, allowsWindow: Bool
    ) throws -> (EntityModel, Int, Filter?) {
        let (model, number) = try setBasedTarget(Model.self, call: call)
        if !allowsWindow && (request.fetchLimit != nil || request.fetchOffset != 0) {
            throw StrataError.misuse(
                """
                \(call) over \(model.name) was given a fetch limit or offset; it aggregates every row the \
                predicate selects. Narrow the predicate instead
                """)
        }
        return (model, number, try engineFilter(request.predicate, call: call))
    }

    /// The model and entity number of a set-based read, refused while the context has unsaved
    /// changes or staged batches for the entity.
    func setBasedTarget(_ type: ManagedObject.Type, call: String) throws -> (EntityModel, Int) {
        guard let model = schemaModel(of: type) else { throw notInSchema(type.entityName, type: type) }
        let number = try entityNumber(model)
        if hasWrittenChanges(model) || pendingBatches.contains(where: { reach(of: $0).contains { $0 === model } }) {
            throw StrataError.misuse(
                """
                \(call) over \(model.name): this context has unsaved changes (or staged batches) for \(model.name), \
                which a set-based read does not see. Save them first, or read in a fresh context
                """)
        }
        return (model, number)
    }

    /// The column of an attribute or to-one relationship key path.
    func storedColumn(_ keyPath: AnyKeyPath, model: EntityModel, call: String) throws -> Int {
        guard let property = model.propertyIndex(forKeyPath: keyPath), let column = model.properties[property].column
        else {
            throw StrataError.misuse(
                """
                \(call) over \(model.name) was given \(keyPath), which is not a stored attribute or to-one \
                relationship of \(model.name)
                """)
        }
        return column
    }
}
