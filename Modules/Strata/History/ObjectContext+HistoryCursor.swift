import StrataStorage

extension ObjectContext {
    /// Moves the history cursor of a delivery past its transaction in this context's next
    /// ``save()``, in the same atomic commit as the context's own changes: a consumer that writes
    /// what it made of a commit processes each commit exactly once, even when it is killed at any
    /// moment (the cursor and the writes land together or not at all).
    ///
    /// ```swift
    /// for try await delivery in container.changes(forCursor: "mailer", entities: [Order.self]) {
    ///     try await container.performUnitOfWork { context in
    ///         for change in delivery.transaction.changes {
    ///             Email(context: context).orderURI = change.objectID.uriString
    ///         }
    ///         try context.moveHistoryCursor(past: delivery)
    ///         try context.save()  // the e-mails and the cursor, or neither
    ///     }
    /// }
    /// ```
    ///
    /// The save is a compare-and-set: it throws ``StrataStorage/StrataError/conflict(_:)`` (a
    /// ``StrataStorage/VersionConflict`` whose `historyCursor` is set) and writes nothing when the
    /// stored cursor is no longer at ``HistoryDelivery/previousToken``: another consumer of the
    /// same cursor processed the commit first, or the cursor was moved with
    /// ``PersistentContainer/setHistoryCursor(_:to:)``. ``ContextFactory/performUnitOfWork(retries:_:)``
    /// does not retry that conflict; restart ``PersistentContainer/changes(forCursor:entities:)``,
    /// which resumes from the stored cursor. A save with nothing else to write commits the move
    /// alone (it appends no history).
    ///
    /// The move lasts until the next successful save, ``rollback()`` or ``reset()``. Call inside
    /// `perform`.
    /// - Throws: as ``moveHistoryCursor(_:from:to:)``.
    public func moveHistoryCursor(past delivery: HistoryDelivery) throws {
        try moveHistoryCursor(delivery.cursor, from: delivery.previousToken, to: delivery.transaction.token)
    }

    /// Moves the history cursor `name` from `expected` (nil: it must not exist yet) to `token` in
    /// this context's next ``save()``, in the same atomic commit as the context's changes.
    ///
    /// ```swift
    /// let cursor = try await container.historyCursors()["indexer"]  // read where the consumer stands
    /// // … process the transactions after it, up to `last` …
    /// try await container.performUnitOfWork { context in
    ///     // … write what the consumer made of them …
    ///     try context.moveHistoryCursor("indexer", from: cursor, to: last)
    ///     try context.save()  // .conflict, and nothing written, if the cursor is not at `cursor`
    /// }
    /// ```
    /// Moving the same cursor again before the save continues the first move (its `expected` must
    /// be the first move's `token`). The rules are those of ``moveHistoryCursor(past:)``.
    /// - Throws: ``StrataStorage/StrataError/misuse(_:native:)`` outside `perform`, when the engine keeps no history,
    ///   for a name that is empty or longer than 256 UTF-8 bytes, a negative token, a token past the
    ///   store's last commit (it did not come from this store, and the cursor would skip every
    ///   commit up to it), a `token` before `expected` (a consumer moves forward; rewind with
    ///   ``PersistentContainer/setHistoryCursor(_:to:)``), or a second move of the cursor that does
    ///   not start where the first ends; the engine's errors reading its last commit's token.
    public func moveHistoryCursor(_ name: String, from expected: HistoryToken?, to token: HistoryToken) throws {
        try checkInside("ObjectContext.moveHistoryCursor(_:from:to:)")
        guard let history = engine as? any HistoryStore else {
            throw StrataError.misuse(
                """
                ObjectContext.moveHistoryCursor: this store's engine keeps no persistent history, so it has no \
                history cursors; open the store with an engine that does (.sqlite, .lmdb, .postgres)
                """)
        }
        var move = HistoryCursorMove(name: name, expectedToken: expected?.rawValue, token: token.rawValue)
        try move.check()
        // Read live, not from this context's snapshot: a token delivered after the snapshot began is valid.
        try HistoryGap.refuseFuture(token.rawValue, current: history.currentHistoryToken())
        if let index = pendingCursorMoves.firstIndex(where: { $0.name == name }) {
            let staged = pendingCursorMoves[index]
            guard staged.token == move.expectedToken else {
                throw StrataError.misuse(
                    """
                    history cursor \(String(reflecting: name)) is already moved to token \(staged.token) in this \
                    context; a second move must start there, not at \(move.expectedToken.map(String.init) ?? "nil")
                    """)
            }
            move.expectedToken = staged.expectedToken
            pendingCursorMoves[index] = move
        } else {
            pendingCursorMoves.append(move)
        }
    }
}
