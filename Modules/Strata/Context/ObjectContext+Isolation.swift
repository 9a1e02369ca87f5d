import StrataStorage

extension ObjectContext {
    /// Makes the next ``save()`` check that an object's row still has the version this context
    /// read, without writing or bumping it: if another context committed a change to it (or
    /// deleted it) meanwhile, the save throws ``StrataStorage/StrataError/conflict(_:)`` and writes nothing.
    ///
    /// Strata's engines give snapshot isolation with the first committer winning on written
    /// rows. Rows a unit of work only reads are not checked, so two units of work that each read
    /// the same rows and write different ones can both commit (write skew). Requiring the rows
    /// a decision rests on to be unchanged makes that unit of work serializable against every
    /// other writer of those rows; with ``ContextFactory/performUnitOfWork(retries:_:)`` the
    /// conflict re-runs the work on fresh data.
    ///
    /// ```swift
    /// try await container.performUnitOfWork { context in
    ///     let checking = try context.existingObject(with: checkingID, as: Account.self)
    ///     let savings = try context.existingObject(with: savingsID, as: Account.self)
    ///     guard checking.balance + savings.balance >= amount else { throw BankError.overdrawn }
    ///     try context.requireUnchanged(savings)     // the rule read it; only checking is written
    ///     checking.balance -= amount
    ///     try context.save()                        // .conflict if savings changed meanwhile
    /// }
    /// ```
    ///
    /// It covers rows that were read, not rows that do not exist yet: a decision that rests on a
    /// query finding nothing ("insert an admin only if there is none") is open to a row another
    /// unit of work inserts meanwhile (a phantom). Guard such a query's results with
    /// ``requireUnchangedResults(of:)``.
    ///
    /// The requirement lasts until the next successful save, ``rollback()`` or ``reset()``. An
    /// object that this save also updates, touches or deletes is checked by that write anyway.
    /// A merge policy never merges a conflict on a required row away. Call inside `perform`.
    /// - Throws: ``StrataStorage/StrataError/misuse(_:native:)`` outside `perform`, and for an object of another
    ///   context (or none), an unsaved (inserted) object, or an object deleted in this context.
    public func requireUnchanged(_ object: ManagedObject) throws {
        try checkInside("ObjectContext.requireUnchanged(_:)")
        guard object.link === link else {
            throw StrataError.misuse(
                """
                ObjectContext.requireUnchanged(_:) was given \(type(of: object).entityName), which belongs to \
                \(object.link == nil ? "no context" : "another context"). Look the object up by its objectID in \
                this context and pass that instance.
                """
            )
        }
        if object.state.contains(.inserted) || object.key <= 0 {
            throw StrataError.misuse(
                """
                ObjectContext.requireUnchanged(_:) was given an unsaved \(type(of: object).entityName): it has no \
                stored row to check. Save it first, or leave it out.
                """
            )
        }
        if object.state.contains(.deleted) || object.state.contains(.gone) {
            throw StrataError.misuse(
                """
                ObjectContext.requireUnchanged(_:) was given a \(type(of: object).entityName) that is deleted in \
                this context; its delete already checks its version at save.
                """
            )
        }
        if !unchangedRequirements.contains(where: { $0 === object }) { unchangedRequirements.append(object) }
    }

    /// Adds a verify for every required row the change set does not already version-check.
    func appendVerifies(to changes: inout ChangeSet, numbers: inout EntityNumberCache) throws {
        guard !unchangedRequirements.isEmpty else { return }
        struct RowKey: Hashable {
            let entity: Int
            let key: Int64
        }
        var checked = Set<RowKey>()
        for write in changes.updates { checked.insert(RowKey(entity: write.entity, key: write.key)) }
        for check in changes.touches + changes.deletes { checked.insert(RowKey(entity: check.entity, key: check.key)) }
        for object in unchangedRequirements where !object.state.contains(.gone) && !object.state.contains(.deleted) {
            let entity = try numbers.number(of: object)
            guard checked.insert(RowKey(entity: entity, key: object.key)).inserted else { continue }
            changes.verifies.append(RowVersionCheck(entity: entity, key: object.key, expectedVersion: object.version))
        }
    }
}
