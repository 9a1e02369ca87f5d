import Foundation
import StrataStorage

extension PersistentContainer {
    /// The token of the store's last committed history transaction (``HistoryToken/beginning``
    /// before the first). Keep it to read or observe what commits after this moment.
    ///
    /// ```swift
    /// let start = try await container.currentHistoryToken()
    /// ```
    /// - Throws: ``StrataStorage/StrataError/misuse(_:native:)`` when the engine keeps no history or
    ///   the container is closed; engine errors (`.busy`, `.io`, `.storeCorrupt`).
    public func currentHistoryToken() async throws -> HistoryToken {
        let hub = try historyHub()
        return HistoryToken(
            rawValue: try await Offload.run { try hub.timed(.historyToken) { try $0.currentHistoryToken() } })
    }

    /// The history transactions committed after `token`, oldest first, as `Sendable` values.
    ///
    /// ```swift
    /// let transactions = try await container.history(after: saved, entities: [Account.self])
    /// saved = transactions.last?.token ?? saved
    /// ```
    /// - Parameters:
    ///   - token: where to start (exclusive); ``HistoryToken/beginning`` for everything still kept
    ///     (after a trim, that starts at the oldest kept transaction: a consumer that must see every
    ///     commit registers a cursor, which trimming respects).
    ///   - entities: keep only the changes to these entities, and only transactions with one
    ///     (all when empty).
    ///   - authors: keep only transactions by these authors (all when nil).
    ///   - limit: return at most this many transactions, counted after the filters (nil: all). The
    ///     store is read in batches of 256 transactions until the page is full or the history ends,
    ///     so an empty page means nothing after `token` matches, and
    ///     `page.last?.token ?? token` is where the next page starts.
    /// - Throws: ``StrataStorage/StrataError/misuse(_:native:)`` for a negative limit or `token`, a `token` past
    ///   the store's last commit (it never came from this store), an entity not in the schema, an
    ///   engine without history or a closed container;
    ///   ``StrataStorage/StrataError/historyTrimmed(after:oldestKept:)`` when the history after `token`
    ///   was deleted (the transactions in between are gone); `.storeCorrupt` for a
    ///   history entry that does not decode; engine errors.
    public func history(
        after token: HistoryToken = .beginning, entities: [ManagedObject.Type] = [], authors: Set<String>? = nil,
        limit: Int? = nil
    ) async throws -> [PersistentHistoryTransaction] {
        let hub = try historyHub()
        let filter = try HistoryFilter(entities: entities, authors: authors, schema: schema)
        if let limit, limit < 0 { throw StrataError.misuse("history(after:limit:) needs a limit of 0 or more") }
        let store = storeIdentifier
        return try await Offload.run {
            try HistoryGap.readFiltered(
                hub.engine, after: token.rawValue, limit: limit, reportingTo: hub.instrumentation
            ) {
                filter.apply(to: $0, store: store)
            }
        }
    }

    /// How many history transactions ``history(after:entities:authors:limit:)`` reads from the
    /// store at a time while it fills a page: the memory a filtered page costs beyond its result.
    static let historyPageBatchSize = 256

    /// Deletes the history before `token`, keeping every transaction a registered cursor has not
    /// yet processed unless `force` is set. Returns the token the history now starts at: the
    /// transactions before it are gone. A `token` past the last commit deletes the whole history
    /// and returns the next commit's token (the current token + 1), never the far-off `token`.
    ///
    /// ```swift
    /// // Keep a week; never past what the search indexer has read.
    /// let kept = try await container.deleteHistory(before: weekOldToken)
    /// ```
    /// - Throws: ``StrataStorage/StrataError/misuse(_:native:)`` for a negative token, an engine
    ///   without history or a closed container; engine errors (`.busy`, `.storeFull`, `.io`).
    @discardableResult
    public func deleteHistory(before token: HistoryToken, force: Bool = false) async throws -> HistoryToken {
        let hub = try historyHub()
        try HistoryGap.refuseNegative(token.rawValue, in: "deleteHistory(before:)")
        let bound = try await Offload.run { try hub.trimHistory(before: token.rawValue, force: force) }
        return HistoryToken(rawValue: bound)
    }

    /// The registered history cursors: each consumer's name and the last token it has processed.
    ///
    /// ```swift
    /// let cursors = try await container.historyCursors()  // ["indexer": HistoryToken(41)]
    /// ```
    /// - Throws: as ``currentHistoryToken()``.
    public func historyCursors() async throws -> [String: HistoryToken] {
        let hub = try historyHub()
        return try await Offload.run { try hub.timed(.historyCursors) { try $0.historyCursors() } }
            .mapValues(HistoryToken.init(rawValue:))
    }

    /// Registers or moves the history cursor `name` to `token`, the last transaction its consumer
    /// has processed; trimming keeps every transaction after the slowest cursor. Stored in the
    /// store, so every process sees it. Pass nil to remove the cursor.
    ///
    /// ```swift
    /// for try await transaction in container.changes(after: saved) {
    ///     try index(transaction)
    ///     try await container.setHistoryCursor("indexer", to: transaction.token)
    /// }
    /// ```
    /// - Throws: ``StrataStorage/StrataError/misuse(_:native:)`` for an empty name or one over 256 bytes,
    ///   a token past the store's last commit (it did not come from this store, and the cursor
    ///   would skip every commit up to it), an engine without history or a closed container;
    ///   engine errors.
    public func setHistoryCursor(_ name: String, to token: HistoryToken?) async throws {
        let hub = try historyHub()
        try await Offload.run {
            if let token { try HistoryGap.refuseFuture(token.rawValue, current: hub.engine.currentHistoryToken()) }
            try hub.engine.setHistoryCursor(name, to: token?.rawValue)
        }
    }

    /// The container's history watch, or `.misuse` when the engine keeps no history.
    func historyHub() throws(StrataError) -> ChangeHub {
        guard let changeHub else {
            throw .misuse(
                """
                this store's engine keeps no persistent history (it does not conform to HistoryStore): \
                open the store with an engine that does, such as .sqlite or .lmdb
                """
            )
        }
        return changeHub
    }
}

/// Which history a reader or observer wants: entity names and authors, checked against the schema.
struct HistoryFilter: Sendable {
    let entityNames: Set<String>?
    let authors: Set<String>?
    /// Every property name of each entity, for inserts (stored without them).
    let propertyNames: [String: Set<String>]
    /// The current name of each entity renamed since (``ManagedObject/originalEntityName``) by its
    /// name before: history written before a rename names the entity as it was then.
    let renamedEntities: [String: String]

    init(entities: [ManagedObject.Type], authors: Set<String>?, schema: Schema) throws(StrataError) {
        var names: Set<String> = []
        for type in entities {
            guard let model = schema.models.first(where: { ObjectIdentifier($0.type) == ObjectIdentifier(type) })
            else {
                if let namesake = schema.model(named: type.entityName) {
                    throw .misuse(
                        """
                        \(String(reflecting: type)) is not the class this container was opened with for entity \
                        \(type.entityName) (that is \(String(reflecting: namesake.type)); a class of another schema \
                        version, perhaps): pass the container's class to read or observe the history of \
                        \(type.entityName)
                        """)
                }
                throw .misuse(
                    """
                    \(type.entityName) is not in this container's schema (its entities: \
                    \(schema.entityNames.joined(separator: ", "))): observe or read the history of its entities only
                    """
                )
            }
            names.insert(model.name)
        }
        self.entityNames = names.isEmpty ? nil : names
        self.authors = authors
        var propertyNames: [String: Set<String>] = [:]
        for model in schema.models { propertyNames[model.name] = Set(model.properties.map(\.name)) }
        self.propertyNames = propertyNames
        var renamedEntities: [String: String] = [:]
        for model in schema.models {
            // An old name that a current entity has taken again stays that entity's.
            if let old = model.originalName, schema.model(named: old) == nil { renamedEntities[old] = model.name }
        }
        self.renamedEntities = renamedEntities
    }

    /// The transaction as the caller sees it, or nil when the filter drops it whole.
    func apply(to stored: HistoryTransaction, store: UUID) -> PersistentHistoryTransaction? {
        if let authors, !authors.contains(stored.author ?? "") { return nil }
        var changes: [PersistentHistoryChange] = []
        changes.reserveCapacity(stored.changes.count)
        for change in stored.changes {
            let entity = renamedEntities.isEmpty ? change.entity : renamedEntities[change.entity] ?? change.entity
            if let entityNames, !entityNames.contains(entity) { continue }
            guard change.key > 0 else { continue }
            changes.append(
                PersistentHistoryChange(
                    objectID: ObjectID(storeIdentifier: store, entityName: entity, primaryKey: change.key),
                    kind: PersistentHistoryChange.Kind(change.kind),
                    changedProperties: change.kind == .insert && change.changedProperties.isEmpty
                        ? propertyNames[entity, default: []] : Set(change.changedProperties),
                    tombstone: change.tombstone.mapValues { TombstoneValue($0.value) }))
        }
        if entityNames != nil && changes.isEmpty { return nil }
        return PersistentHistoryTransaction(
            token: HistoryToken(rawValue: stored.token), timestamp: stored.timestamp, author: stored.author,
            changes: changes)
    }
}

extension PersistentHistoryChange.Kind {
    init(_ kind: HistoryChange.Kind) {
        switch kind {
        case .insert: self = .insert
        case .update: self = .update
        case .delete: self = .delete
        }
    }
}
