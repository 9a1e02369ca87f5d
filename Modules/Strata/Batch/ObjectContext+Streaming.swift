import StrataStorage

extension ObjectContext {
    /// Reads the objects a request selects in batches of `size`, in primary-key order, in memory
    /// bounded by the batch: each batch's objects are built, passed to `body`, and let go when
    /// `body` returns. Those `body` changed stay in the context, to be saved, each with a copy of
    /// its own values (as does an object something else still holds), so no batch's memory
    /// outlives it for one object's sake.
    ///
    /// Every batch reads the same snapshot as the rest of the `perform`, so a long read sees one
    /// consistent store however many commits land meanwhile. The request's predicate, limit and
    /// offset apply; it must have no sort descriptors (the order is the objects' creation order,
    /// by primary key) and a predicate the engine runs whole.
    ///
    /// ```swift
    /// var total: Int64 = 0
    /// try context.forEachBatch(of: FetchRequest<Account>(), size: 500) { accounts in
    ///     for account in accounts { total += account.balance }
    /// }
    /// ```
    ///
    /// Lifetime: an object of a batch is valid inside `body`; do not keep it past the call (keep
    /// its ``ManagedObject/objectID`` instead). An object this context already held before the
    /// read is passed as that same instance, and stays.
    ///
    /// Save after the loop, once: ``save()`` inside `body` throws `.misuse` and writes nothing
    /// (it would end the snapshot the remaining batches read, with part of the work committed),
    /// and a `body` that ends the snapshot otherwise (``reset()``, ``mergeChanges(from:)``) stops the
    /// read with `.misuse`.
    /// - Throws: `.misuse` outside `perform`, for a size below 1, sort descriptors, unsaved changes
    ///   (or staged batches) for the entity, or a predicate the engine cannot run, and when `body`
    ///   saves or ends the snapshot; engine errors; whatever `body` throws (reading stops).
    public func forEachBatch<Model: ManagedObject>(
        of request: FetchRequest<Model>, size: Int = 1_000, _ body: ([Model]) throws -> Void
    ) throws {
        try checkInside("ObjectContext.forEachBatch(of:size:_:)")
        guard size >= 1 else {
            throw StrataError.misuse("forEachBatch(of:size:) was given a size of \(size); pass 1 or more")
        }
        guard request.sortBy.isEmpty else {
            throw StrataError.misuse(
                """
                forEachBatch(of:size:) over \(Model.entityName) was given sort descriptors; it streams in primary-key \
                order, so that any size reads in bounded memory. Sort each batch yourself, or fetch a sorted page with \
                fetchLimit and fetchOffset
                """)
        }
        let (model, number, filter) = try setBasedRead(request, call: "forEachBatch", allowsWindow: true)
        if request.fetchOffset < 0 || (request.fetchLimit ?? 0) < 0 {
            throw StrataError.misuse("forEachBatch(of:size:) was given a negative fetch limit or offset")
        }
        let reader = try snapshot()
        let outerStream = streamingEntity
        streamingEntity = Model.entityName
        defer { streamingEntity = outerStream }
        var remaining = request.fetchLimit ?? Int.max
        var offset = request.fetchOffset
        var after: Int64?
        let link = self.link
        while remaining > 0 {
            var conditions: [Filter] = filter.map { [$0] } ?? []
            if let after { conditions.append(.primaryKey(.greaterThan, after)) }
            let plan = FetchPlan(
                entity: number, filter: conditions.isEmpty ? nil : .and(conditions), limit: min(size, remaining),
                offset: offset)
            offset = 0
            var batch: [Model] = []
            var fresh: [ManagedObject] = []
            let rowsPerBlock = min(size, remaining, Self.streamedRowsPerBlock)
            // Room for at most a block's rows up front, whatever the size asked: a size past the
            // result (`Int.max` for "all in one batch") must not ask for memory it will not use,
            // and an array reservation near `Int.max` overflows inside the standard library.
            batch.reserveCapacity(rowsPerBlock)
            // The batch's values go in blocks of their own, not the context's arena, so that they
            // go with the batch: the read holds its blocks until the batch ends, when every object
            // still held gets values of its own (below), so no object needs to hold a block.
            var blocks: [DetachedValues] = []
            defer {
                // The batch's unchanged objects leave the identity map; those still held after
                // that (by the context, changed, or by a cache or the caller) get values of their
                // own, so that a block never outlives its batch for one object's sake.
                batch = []
                for object in fresh
                where object.state.isDisjoint(with: [.updated, .deleted, .touched, .relationDirty]) {
                    _ = registry[number].removeValue(forKey: object.key)
                }
                Self.detachSurvivors(&fresh)
                // Only now may the blocks go: until here the batch's objects read their slots.
                withExtendedLifetime(blocks) {}
            }
            try reader.forEachRow(for: plan) { row in
                try Self.checkShape(row, of: model)
                let object = registry[number].object(
                    forKey: row.key,
                    orRegister: {
                        let made = model.type.init()
                        made.model = model
                        made.link = link
                        made.key = row.key
                        made.version = row.version
                        Self.place(
                            row.values, of: made, columns: model.columnCount, in: &blocks, rowsPerBlock: rowsPerBlock)
                        fresh.append(made)
                        return made
                    })
                batch.append(ExactCast.object(object, as: Model.self))
            }
            guard let last = batch.last else { return }
            after = last.key
            let count = batch.count
            remaining -= count
            try body(batch)
            if count < plan.limit ?? Int.max || remaining == 0 { return }
            guard self.reader === reader else {
                throw StrataError.misuse(
                    """
                    forEachBatch(of:size:) over \(Model.entityName): its body ended the snapshot the batches read \
                    (reset() or mergeChanges(from:)), so the remaining batches cannot be read. Call them after \
                    forEachBatch returns
                    """)
            }
        }
    }

    /// The most rows of a batched read whose values share one block (see ``DetachedValues``).
    static let streamedRowsPerBlock = 1_024

    /// Empties `objects`, giving each object that something other than the array still holds
    /// values of its own (a copy out of its batch's block). Every object of a batch goes through
    /// here before its blocks are freed: what it leaves behind is either freed with the array or
    /// reads slots of its own.
    private static func detachSurvivors(_ objects: inout [ManagedObject]) {
        while var object = objects.popLast() {
            if !isKnownUniquelyReferenced(&object) { object.detach(object.values.array) }
        }
    }

    /// Gives a streamed object its values in slots of the last of `blocks`, starting a new block
    /// (for `rowsPerBlock` rows) when there is none or it is full. The object does not hold the
    /// block: the read holds `blocks` until ``detachSurvivors(_:)`` has run over the batch.
    private static func place(
        _ values: ContiguousArray<StoredValue>, of object: ManagedObject, columns: Int,
        in blocks: inout [DetachedValues], rowsPerBlock: Int
    ) {
        if let current = blocks.last, let slots = current.claim(values, count: columns) {
            object.slots = slots
            return
        }
        let next = DetachedValues(capacity: max(rowsPerBlock, 1) * columns)
        blocks.append(next)
        // A new block holds at least one row; its own slots otherwise.
        guard let slots = next.claim(values, count: columns) else { return object.detach(values) }
        object.slots = slots
    }
}
