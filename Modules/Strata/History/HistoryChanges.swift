import StrataStorage

extension PersistentContainer {
    /// The store's commits as they happen, from this process and every other process on the
    /// store: an `AsyncSequence` of ``PersistentHistoryTransaction`` values.
    ///
    /// Guarantees: every commit after `token` is delivered **exactly once and in token order**,
    /// including commits made by other containers and other processes (saves of this
    /// container's contexts wake it at once; others are seen by polling the store's token every
    /// few milliseconds while the sequence is iterated). Starting from a saved token first
    /// delivers everything committed since, as long as the history was not trimmed past it.
    /// Cancelling the iterating task ends the sequence (it returns nil) and releases what it
    /// used; so does leaving the loop. Lifetime rule: the sequence holds its container while it is
    /// iterated, so releasing your last reference to the container does not end it (the store
    /// stays open and the loop keeps waiting); cancel the task or call
    /// ``PersistentContainer/close()``, which ends it with `.misuse`.
    ///
    /// ```swift
    /// for try await transaction in container.changes(entities: [Account.self]) {
    ///     for change in transaction.changes { cache.invalidate(change.objectID) }
    /// }
    /// ```
    /// - Parameters:
    ///   - token: deliver the commits after this token; nil for those after this call.
    ///   - entities: deliver only the changes to these entities, and only commits with one (all
    ///     when empty).
    /// - Returns: the sequence. Iterating it throws `.misuse` for an entity not in the schema, an
    ///   engine without history, a closed container (also when ``PersistentContainer/close()`` is
    ///   called while it waits) or a `token` past the store's last commit (refused, not waited on:
    ///   it never came from this store), `.historyTrimmed` when the history after `token` was
    ///   deleted, `.storeCorrupt` for a history entry that does not decode, and engine errors.
    public func changes(after token: HistoryToken? = nil, entities: [ManagedObject.Type] = []) -> HistoryChanges {
        HistoryChanges(container: self, start: HistoryStart(token, container: self), entities: entities)
    }
}

/// The sequence ``PersistentContainer/changes(after:entities:)`` returns: committed history
/// transactions, exactly once and in order, from every process on the store.
///
/// ```swift
/// for try await transaction in container.changes() { print(transaction.token) }
/// ```
public struct HistoryChanges: AsyncSequence, Sendable {
    /// Each committed transaction (filtered by the sequence's entities).
    public typealias Element = PersistentHistoryTransaction

    let container: PersistentContainer
    let start: HistoryStart
    let entities: [ManagedObject.Type]

    /// An iterator that reads the history after its position and waits for the next commit.
    public func makeAsyncIterator() -> Iterator {
        Iterator(container: container, start: start, entities: entities)
    }

    /// Reads the store's history in order; see ``HistoryChanges``.
    public struct Iterator: AsyncIteratorProtocol {
        private let reader: HistoryFollower
        private var buffered: [PersistentHistoryTransaction] = []
        private var next = 0

        init(container: PersistentContainer, start: HistoryStart, entities: [ManagedObject.Type]) {
            reader = HistoryFollower(container: container, start: start, entities: entities)
        }

        /// The next committed transaction; nil once the task is cancelled.
        /// - Throws: see ``PersistentContainer/changes(after:entities:)``.
        public mutating func next() async throws -> PersistentHistoryTransaction? {
            while next == buffered.count {
                guard let batch = try await reader.nextBatch() else { return nil }
                buffered = batch
                next = 0
            }
            defer { next += 1 }
            return buffered[next]
        }
    }
}

/// Where an observer starts: a given token, or the store's token when it was created.
struct HistoryStart: Sendable {
    let token: Result<Int64, any Error>

    init(_ token: HistoryToken?, container: PersistentContainer) {
        if let token {
            self.token = .success(token.rawValue)
        } else {
            self.token = Result { try container.historyHub().engine.currentHistoryToken() }
        }
    }
}

/// Follows a store's history for one observer: reads what committed after its position, in
/// batches, and waits on the container's ``ChangeHub`` when there is nothing new. Registered
/// with the hub while it exists (the hub polls only while someone follows).
final class HistoryFollower: @unchecked Sendable {
    // Used by one iterator at a time (iterators are not shared across tasks).
    private let container: PersistentContainer
    private let hub: Result<ChangeHub, StrataError>
    private let filter: Result<HistoryFilter, StrataError>
    private var position: Result<Int64, any Error>
    private static let batchSize = 256

    init(container: PersistentContainer, start: HistoryStart, entities: [ManagedObject.Type]) {
        self.container = container
        self.hub = Result { () throws(StrataError) in try container.historyHub() }
        self.filter = Result { () throws(StrataError) in
            try HistoryFilter(entities: entities, authors: nil, schema: container.schema)
        }
        self.position = start.token
        if case .success(let hub) = hub { hub.subscribe() }
    }

    deinit {
        if case .success(let hub) = hub { hub.unsubscribe() }
    }

    /// The last token read (the start until something is read).
    var lastToken: Int64 {
        get throws { try position.get() }
    }

    /// The next non-empty batch of transactions after the position, filtered, waiting for a
    /// commit when there is none; nil once the task is cancelled.
    func nextBatch() async throws -> [PersistentHistoryTransaction]? {
        let filter = try filter.get()
        let store = container.storeIdentifier
        while let stored = try await nextStoredBatch() {
            let delivered = stored.compactMap { filter.apply(to: $0, store: store) }
            if !delivered.isEmpty { return delivered }
        }
        return nil
    }

    /// The transactions after the position, unfiltered (query observation only needs to know
    /// whether one touches its entities), waiting for a commit when there is none; nil once the
    /// task is cancelled.
    /// - Throws: ``StrataStorage/StrataError/historyTrimmed(after:oldestKept:)`` when the history
    ///   after the position was deleted; the store's errors.
    func nextStoredBatch() async throws -> [HistoryTransaction]? {
        let hub = try hub.get()
        while true {
            if Task.isCancelled { return nil }
            let after = try position.get()
            let stored = try await Offload.run {
                try HistoryGap.read(hub.engine, after: after, limit: Self.batchSize, reportingTo: hub.instrumentation)
            }
            if let last = stored.last {
                position = .success(last.token)
                return stored
            }
            do {
                try await hub.waitForCommit(after: after)
            } catch is CancellationError {
                return nil
            }
        }
    }
}

/// Reading the history after a token, refusing to skip transactions that trimming deleted.
enum HistoryGap {
    /// The transactions after `token` (at most `limit`), in order. Tokens of committed
    /// transactions follow each other without gaps, so a first token past `token + 1` (or none
    /// although the store's token is past `token`) means the history was trimmed past `token`.
    /// Reading from 0 (the beginning) reads whatever is kept. A token past the store's last commit
    /// never came from this store (tokens are never reused and only grow), so it is refused rather
    /// than waited on: waiting would deliver nothing until the store caught up, skipping every
    /// commit in between.
    /// - Throws: ``StrataStorage/StrataError/historyTrimmed(after:oldestKept:)``; `.misuse` for a
    ///   negative token or one past the store's last commit; the engine's errors.
    static func read(
        _ engine: any HistoryStore, after token: Int64, limit: Int?, reportingTo hook: Instrumentation? = nil
    ) throws -> [HistoryTransaction] {
        try refuseNegative(token, in: "history(after:)")
        var stored = try readStored(engine, after: token, limit: limit, reportingTo: hook)
        guard token > 0, limit != 0 else { return stored }
        if stored.isEmpty {
            let current = try engine.currentHistoryToken()
            if current < token { throw futureToken(token, current: current) }
            guard current > token else { return [] }
            // Read again: every transaction up to `current` is visible now, unless it was deleted.
            stored = try readStored(engine, after: token, limit: limit, reportingTo: hook)
            guard !stored.isEmpty else { throw StrataError.historyTrimmed(after: token, oldestKept: current + 1) }
        }
        if stored[0].token > token + 1 { throw StrataError.historyTrimmed(after: token, oldestKept: stored[0].token) }
        return stored
    }

    /// `engine.history(after:limit:)`, reported to `hook` when there is one.
    private static func readStored(
        _ engine: any HistoryStore, after token: Int64, limit: Int?, reportingTo hook: Instrumentation?
    ) throws -> [HistoryTransaction] {
        guard let hook else { return try engine.history(after: token, limit: limit) }
        return try hook.timed(
            .historyRead, entity: nil, count: { $0.count },
            {
                try engine.history(after: token, limit: limit)
            })
    }

    /// The transactions after `token` that `keep` maps to a value, oldest first, at most `limit` of
    /// them (nil: all), counted after `keep`: the store is read in batches of
    /// ``PersistentContainer/historyPageBatchSize``, each checked for a trim like ``read(_:after:limit:)``,
    /// until the page is full or a batch comes back short (the end of the history).
    /// - Throws: as ``read(_:after:limit:)``.
    static func readFiltered<T>(
        _ engine: any HistoryStore, after token: Int64, limit: Int?, reportingTo hook: Instrumentation? = nil,
        keep: (HistoryTransaction) -> T?
    ) throws -> [T] {
        try refuseNegative(token, in: "history(after:)")
        var kept: [T] = []
        var position = token
        let batchSize = PersistentContainer.historyPageBatchSize
        while limit.map({ kept.count < $0 }) ?? true {
            let stored = try read(engine, after: position, limit: batchSize, reportingTo: hook)
            for transaction in stored {
                guard let value = keep(transaction) else { continue }
                kept.append(value)
                if let limit, kept.count == limit { break }
            }
            guard stored.count == batchSize, let last = stored.last else { break }
            position = last.token
        }
        return kept
    }

    /// Refuses a negative token: tokens start at 0 (``HistoryToken/beginning``), so a negative one
    /// never came from a store (read as the beginning, it would hide a trim).
    static func refuseNegative(_ token: Int64, in api: String) throws(StrataError) {
        guard token >= 0 else {
            throw .misuse(
                """
                \(api) was given history token \(token): tokens start at 0 (HistoryToken.beginning) and only grow, \
                so it did not come from a store; use a token read from the store
                """)
        }
    }

    /// Refuses a token past the store's last commit (`current`, read live): it never came from
    /// this store, and a cursor left there would skip every commit up to it.
    static func refuseFuture(_ token: Int64, current: Int64) throws(StrataError) {
        if token > current { throw futureToken(token, current: current) }
    }

    private static func futureToken(_ token: Int64, current: Int64) -> StrataError {
        .misuse(
            """
            history token \(token) is past this store's last commit (\(current)): it was not read from this \
            store, or the store was replaced by an older copy; start again from currentHistoryToken() or \
            .beginning
            """
        )
    }
}
