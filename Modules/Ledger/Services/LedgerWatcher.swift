public import Strata

/// Watches a ledger store change, live, from this process and every other process that writes
/// to it: each commit becomes a ``LedgerUpdate`` of ``LedgerChange`` values (account, amount,
/// new balance), in commit order, exactly once.
///
/// It follows the store's persistent history with `PersistentContainer.changes(after:entities:)`
/// and reads the changed accounts and transactions in a fresh context per commit, so only
/// `Sendable` values leave it. `ledger watch` prints what it yields.
///
/// ```swift
/// let watcher = LedgerWatcher(container: container)
/// let start = try await watcher.currentToken()
/// for try await update in watcher.updates(after: start) {
///     for change in update.changes where change.kind == .posted {
///         print(change.account ?? "?", MinorUnits.format(change.amount ?? 0), MinorUnits.format(change.balance ?? 0))
///     }
/// }
/// ```
public struct LedgerWatcher: Sendable {
    /// The ledger store watched.
    public let container: PersistentContainer

    /// - Parameter container: a container opened with ``Strata/PersistentContainer/init(ledger:progress:)``.
    public init(container: PersistentContainer) {
        self.container = container
    }

    /// The token of the store's last commit: watch ``updates(after:)`` it to see only what
    /// commits from now on.
    ///
    /// ```swift
    /// let start = try await watcher.currentToken()
    /// ```
    /// - Throws: storage errors (`StrataError`), and `StrataError.misuse` for a store opened
    ///   without history.
    public func currentToken() async throws -> HistoryToken {
        try await container.currentHistoryToken()
    }

    /// Every commit after `token` that changed an account or a transaction, as it happens: first
    /// what was committed since `token`, then each new commit, from any process on the store,
    /// until the iterating task is cancelled (the sequence then ends).
    ///
    /// ```swift
    /// for try await update in watcher.updates(after: .beginning) { print(update.token, update.changes.count) }
    /// ```
    /// - Parameter token: the last commit already seen (``Strata/HistoryToken/beginning`` for
    ///   the whole history the store keeps).
    /// - Returns: the sequence. Iterating it throws `StrataError.historyTrimmed` when the history
    ///   after `token` was deleted, and storage errors.
    public func updates(after token: HistoryToken) -> LedgerUpdates {
        LedgerUpdates(
            watcher: self, history: container.changes(after: token, entities: [Account.self, Transaction.self]))
    }

    /// What one history transaction of the store did to the ledger, read in a fresh context.
    ///
    /// ```swift
    /// for transaction in try await container.history(after: saved) {
    ///     let update = try await watcher.update(for: transaction)
    ///     print(update.changes.count)
    /// }
    /// ```
    /// - Throws: storage errors (`StrataError`).
    public func update(for transaction: PersistentHistoryTransaction) async throws -> LedgerUpdate {
        let context = container.newBackgroundContext()
        let changes = try await context.perform { try Self.changes(in: transaction, context: context) }
        return LedgerUpdate(
            token: transaction.token, timestamp: transaction.timestamp, author: transaction.author, changes: changes)
    }
}

/// The sequence ``LedgerWatcher/updates(after:)`` returns: one ``LedgerUpdate`` per commit,
/// in order, until the iterating task is cancelled.
///
/// ```swift
/// for try await update in watcher.updates(after: start) { print(update.token.rawValue) }
/// ```
public struct LedgerUpdates: AsyncSequence, Sendable {
    /// One commit's changes.
    public typealias Element = LedgerUpdate

    let watcher: LedgerWatcher
    let history: HistoryChanges

    /// An iterator over the store's commits.
    public func makeAsyncIterator() -> Iterator {
        Iterator(watcher: watcher, history: history.makeAsyncIterator())
    }

    /// Reads the next commit and what it changed; see ``LedgerUpdates``.
    public struct Iterator: AsyncIteratorProtocol {
        let watcher: LedgerWatcher
        var history: HistoryChanges.Iterator

        /// The next commit's changes; nil once the task is cancelled.
        /// - Throws: see ``LedgerWatcher/updates(after:)``.
        public mutating func next() async throws -> LedgerUpdate? {
            guard let transaction = try await history.next() else { return nil }
            return try await watcher.update(for: transaction)
        }
    }
}
