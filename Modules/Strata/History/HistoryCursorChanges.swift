import StrataStorage

extension PersistentContainer {
    /// The store's commits after the history cursor `name`, as deliveries to process **exactly
    /// once**, across crashes: each ``HistoryDelivery`` is processed in a unit of work that moves
    /// the cursor past it in its own save (``ObjectContext/moveHistoryCursor(past:)``), so the
    /// consumer's writes and its cursor land together or not at all. A consumer killed at any
    /// moment restarts here and resumes after the last commit it saved for: nothing is repeated,
    /// nothing skipped.
    ///
    /// ```swift
    /// for try await delivery in container.changes(forCursor: "mailer", entities: [Order.self]) {
    ///     try await container.performUnitOfWork { context in
    ///         for change in delivery.transaction.changes {
    ///             Email(context: context).orderURI = change.objectID.uriString
    ///         }
    ///         try context.moveHistoryCursor(past: delivery)
    ///         try context.save()
    ///     }
    /// }
    /// ```
    ///
    /// The sequence starts after the cursor's stored token, read when iteration begins; a cursor
    /// that does not exist yet is registered then, at the store's current token (so a first run
    /// delivers the commits after it starts, and a restart resumes where it stopped). Every delivery
    /// must move the cursor (a save with nothing else to write commits the move alone): each move
    /// expects the cursor where the previous delivery left it, so a delivery left unmoved makes the
    /// next move throw ``StrataStorage/StrataError/conflict(_:)``, as does another consumer of the
    /// same cursor moving it first. Two consumers of one cursor therefore never both process a
    /// commit: the loser's save throws and writes nothing; it then stops, or restarts this sequence
    /// (which resumes from the stored cursor). The cursor holds back trimming like any cursor. Other
    /// guarantees, cancellation and errors are those of ``changes(after:entities:)``.
    ///
    /// - Parameters:
    ///   - name: the cursor, 1 to 256 UTF-8 bytes.
    ///   - entities: deliver only the changes to these entities, and only commits with one (all
    ///     when empty); the cursor moves past the delivered commits only.
    /// - Returns: the sequence. Iterating it throws `.misuse` for a bad name, and what
    ///   ``changes(after:entities:)`` throws.
    public func changes(forCursor name: String, entities: [ManagedObject.Type] = []) -> HistoryCursorChanges {
        HistoryCursorChanges(container: self, cursor: name, entities: entities)
    }

    /// The token the cursor `name` stores, registering it at the store's current token when it does
    /// not exist (a compare-and-set commit, so two consumers starting at once agree on one token).
    func startOfCursor(_ name: String) async throws -> Int64 {
        let hub = try historyHub()
        try HistoryCursor.check(name, token: nil)
        return try await Offload.run {
            while true {
                if let token = try hub.engine.historyCursors()[name] { return token }
                var changes = ChangeSet()
                let current = try hub.engine.currentHistoryToken()
                changes.cursorMoves = [HistoryCursorMove(name: name, expectedToken: nil, token: current)]
                do {
                    try hub.engine.commit(changes)
                    return current
                } catch StrataError.conflict {
                    continue // registered meanwhile by another consumer: read it
                }
            }
        }
    }
}

/// One commit delivered to a cursor's consumer (``PersistentContainer/changes(forCursor:entities:)``):
/// the transaction, and where the cursor stands before it.
///
/// ```swift
/// try context.moveHistoryCursor(past: delivery)  // from previousToken to transaction.token
/// ```
public struct HistoryDelivery: Sendable, Hashable {
    /// The cursor's name.
    public let cursor: String
    /// The token the cursor holds until this delivery is processed: the previous delivery's, or the
    /// cursor's stored token for the first.
    public let previousToken: HistoryToken
    /// The commit to process.
    public let transaction: PersistentHistoryTransaction

    /// A delivery (for tests and adapters; the sequence builds them).
    public init(cursor: String, previousToken: HistoryToken, transaction: PersistentHistoryTransaction) {
        self.cursor = cursor
        self.previousToken = previousToken
        self.transaction = transaction
    }
}

/// The sequence ``PersistentContainer/changes(forCursor:entities:)`` returns: the commits after a
/// history cursor, to be processed exactly once.
///
/// ```swift
/// for try await delivery in container.changes(forCursor: "indexer") { print(delivery.transaction.token) }
/// ```
public struct HistoryCursorChanges: AsyncSequence, Sendable {
    /// A commit and where the cursor stands before it.
    public typealias Element = HistoryDelivery

    let container: PersistentContainer
    let cursor: String
    let entities: [ManagedObject.Type]

    /// An iterator that starts after the stored cursor and waits for the next commit.
    public func makeAsyncIterator() -> Iterator {
        Iterator(container: container, cursor: cursor, entities: entities)
    }

    /// Reads the store's history after the cursor, in order; see ``HistoryCursorChanges``.
    public struct Iterator: AsyncIteratorProtocol {
        private let container: PersistentContainer
        private let cursor: String
        private let entities: [ManagedObject.Type]
        /// The commits after the cursor's stored token, read once the first delivery is asked for.
        private var commits: HistoryChanges.Iterator?
        private var previous: Int64 = 0

        init(container: PersistentContainer, cursor: String, entities: [ManagedObject.Type]) {
            self.container = container
            self.cursor = cursor
            self.entities = entities
        }

        /// The next commit after the cursor; nil once the task is cancelled.
        /// - Throws: see ``PersistentContainer/changes(forCursor:entities:)``.
        public mutating func next() async throws -> HistoryDelivery? {
            if commits == nil {
                if Task.isCancelled { return nil }
                previous = try await container.startOfCursor(cursor)
                commits = HistoryChanges.Iterator(
                    container: container, start: HistoryStart(HistoryToken(rawValue: previous), container: container),
                    entities: entities)
            }
            guard let transaction = try await commits?.next() else { return nil }
            defer { previous = transaction.token.rawValue }
            return HistoryDelivery(
                cursor: cursor, previousToken: HistoryToken(rawValue: previous), transaction: transaction)
        }
    }
}
