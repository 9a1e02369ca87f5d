import StrataStorage

extension ObjectContext {
    /// Makes the next ``save()`` check that the stored rows a fetch request selects are still
    /// exactly the ones this context sees now, each at the same version: if another context
    /// committed a row that now matches, deleted or changed a matching row, or changed a row so
    /// that it matches or no longer does, the save throws
    /// ``StrataStorage/StrataError/conflict(_:)`` naming those rows and writes nothing.
    ///
    /// ``requireUnchanged(_:)`` guards rows that were read; it cannot guard a row that does not
    /// exist yet. A decision that rests on a *query* — "insert an admin only if there is none",
    /// "book the slot only if no booking overlaps" — is open to phantoms: two units of work each
    /// see no match, each insert one, and both commit. Guarding the query's results closes it:
    /// the second save conflicts, and ``ContextFactory/performUnitOfWork(retries:_:)`` re-runs
    /// its work, which now sees the first one's row.
    ///
    /// ```swift
    /// try await container.performUnitOfWork { context in
    ///     let admins = FetchRequest<Member>(predicate: #Predicate { $0.org == org && $0.isAdmin })
    ///     if try context.fetch(admins).isEmpty {
    ///         try context.requireUnchangedResults(of: admins)  // no admin may appear meanwhile
    ///         let admin = Member(context: context)
    ///         admin.org = org
    ///         admin.isAdmin = true
    ///     }
    ///     try context.save()  // .conflict if another admin of org was committed meanwhile
    /// }
    /// ```
    ///
    /// What is guarded: the rows of the store that match the request's predicate, as this
    /// context's current snapshot sees them (the snapshot a `fetch` in the same `perform` reads;
    /// call it in the `perform` whose fetch your decision rests on). Sort descriptors,
    /// `fetchLimit`, `fetchOffset` and prefetching are ignored: the whole matching set is guarded,
    /// not a window of it. This context's own unsaved changes are not part of the set: an object
    /// it inserts, changes or deletes is written by the save as usual, and the guard is checked
    /// against the store before the save's writes. A part of the predicate that Strata evaluates
    /// in memory (see ``FetchRequest``) cannot be re-run by the engine: the guard then covers the
    /// wider set the engine selects, so a change there conflicts too (safe, maybe more often).
    ///
    /// Cost: the save re-runs the query inside its write transaction (one more query per guard,
    /// as fast as the fetch). On PostgreSQL, a save with a guard and writes runs its transaction
    /// `SERIALIZABLE` (so that two such saves cannot both pass their check); the server's
    /// predicate locks may then report a conflict where none happened, which the unit of work's
    /// retry absorbs.
    ///
    /// The requirement lasts until the next successful save, ``rollback()`` or ``reset()``. A save
    /// with guards and no change still checks them and writes nothing. A merge policy never merges
    /// a conflict of a guarded set away. Call inside `perform`.
    /// - Parameter request: the fetch whose results must not change.
    /// - Throws: ``StrataStorage/StrataError/misuse(_:native:)`` outside `perform`, for an entity
    ///   class the container's schema does not list, and for a request `fetch` would refuse (a
    ///   negative offset or limit, a prefetching key path that is not a relationship);
    ///   ``StrataStorage/StrataError/invalidURI(_:reason:)`` as `fetch` throws it; and engine errors
    ///   (`.busy`, `.io`, `.storeCorrupt`) from reading the current results.
    public func requireUnchangedResults<Entity: ManagedObject>(of request: FetchRequest<Entity>) throws {
        try checkInside("ObjectContext.requireUnchangedResults(of:)")
        let query = try FetchQuery(request, context: self)
        var guarded = ResultSetGuard(entity: query.number, filter: query.pushdown, expected: [:])
        try snapshot().forEachRow(for: guarded.plan) { guarded.expected[$0.key] = $0.version }
        resultGuards.append(guarded)
    }
}
