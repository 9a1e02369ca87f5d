/// One thing a container's store did, reported to its ``Instrumentation`` after the fact.
///
/// ```swift
/// let hook = Instrumentation { event in
///     switch event {
///     case .engineCall(let call): print(call.operation, call.duration)
///     case .commit(let commit): print("saved", commit.inserted, commit.updated, commit.deleted)
///     case .retry(let attempt, _, let error): print("attempt \(attempt) after \(error)")
///     default: break
///     }
/// }
/// ```
///
/// New cases may be added in a minor version: switch over an event with a `default` branch.
///
/// ## Topics
/// ### Engine calls and saves
/// - ``engineCall(_:)``
/// - ``commit(_:)``
/// - ``EngineCall``
/// - ``Commit``
/// ### Units of work
/// - ``conflict(attempt:conflicts:)``
/// - ``retry(attempt:delay:after:)``
/// - ``retriesExhausted(attempts:errors:)``
/// ### Migrations and history
/// - ``migration(_:)``
/// - ``historyTrimmed(_:)``
/// - ``HistoryTrim``
public enum StrataEvent: Sendable {
    /// A call into the storage engine finished (successfully or not), with how long it took.
    /// A successful save's engine commit is reported here like every other call, and once more,
    /// with its row counts, as ``commit(_:)``.
    case engineCall(EngineCall)
    /// A save committed: its row counts and the engine commit's duration.
    case commit(Commit)
    /// An attempt of ``ContextFactory/performUnitOfWork(retries:_:)`` (1 for the first) failed
    /// with a save conflict: another operation saved the same rows first.
    case conflict(attempt: Int, conflicts: [VersionConflict])
    /// ``ContextFactory/performUnitOfWork(retries:_:)`` starts attempt `attempt` (2 for the first
    /// retry) after sleeping `delay`, because the previous attempt failed with `after`
    /// (`.conflict` or `.busy`).
    case retry(attempt: Int, delay: Duration, after: StrataError)
    /// ``ContextFactory/performUnitOfWork(retries:_:)`` ran out of retries: `attempts` attempts
    /// failed with the retryable `errors`, and it throws.
    case retriesExhausted(attempts: Int, errors: [StrataError])
    /// A migration made progress while the container opened (the same reports as the `progress`
    /// closure of ``PersistentContainer/init(schema:migrationPlan:engine:progress:recordsHistory:)``).
    case migration(MigrationProgress)
    /// ``PersistentContainer/deleteHistory(before:force:)`` trimmed the persistent history.
    case historyTrimmed(HistoryTrim)
}

extension StrataEvent {
    /// A finished call into the storage engine.
    ///
    /// ```swift
    /// if case .engineCall(let call) = event, call.error == nil {
    ///     print("\(call.operation) on \(call.entity ?? "-"): \(call.duration)")
    /// }
    /// ```
    public struct EngineCall: Sendable {
        /// Which engine call.
        public var operation: EngineOperation
        /// The entity it read or wrote, when it concerns one.
        public var entity: String?
        /// When the call started (calls made one after another on one context start in order).
        public var startedAt: ContinuousClock.Instant
        /// How long it took (never negative). For ``EngineOperation/fetch`` this includes the core's
        /// work on each row handed over, because the engine streams rows to it.
        public var duration: Duration
        /// What it produced, when that is a count: rows fetched, keys allocated, history
        /// transactions read.
        public var count: Int?
        /// The error the call threw; nil when it succeeded.
        public var error: (any Error)?
    }

    /// The kinds of engine call an ``EngineCall`` reports.
    public enum EngineOperation: String, Sendable, Hashable, CaseIterable {
        /// Beginning a read snapshot.
        case snapshot
        /// Reading one row by key (a lookup by object ID, a fault).
        case lookup
        /// Reading the rows of a plan (a fetch, a prefetch, a batch's selection).
        case fetch
        /// Counting rows.
        case count
        /// Computing an aggregate.
        case aggregate
        /// Reading the links of a many-to-many relationship.
        case links
        /// Committing a change set.
        case commit
        /// Allocating primary keys for inserted objects.
        case allocateKeys
        /// Reading persistent history transactions.
        case historyRead
        /// Reading the store's current history token.
        case historyToken
        /// Reading the history cursors.
        case historyCursors
        /// Deleting history (trimming).
        case historyTrim
    }

    /// Rows a save wrote, for one entity or in all.
    public struct RowCounts: Sendable, Hashable {
        /// Rows inserted.
        public var inserted = 0
        /// Rows updated (values changed).
        public var updated = 0
        /// Rows deleted.
        public var deleted = 0

        /// Row counts (all zero by default).
        public init(inserted: Int = 0, updated: Int = 0, deleted: Int = 0) {
            self.inserted = inserted
            self.updated = updated
            self.deleted = deleted
        }
    }

    /// A save's commit.
    ///
    /// ```swift
    /// if case .commit(let commit) = event {
    ///     for (entity, rows) in commit.byEntity { print(entity, rows.inserted) }
    /// }
    /// ```
    public struct Commit: Sendable {
        /// Rows inserted (objects, and rows of batches the core worked out).
        public var inserted: Int
        /// Rows updated.
        public var updated: Int
        /// Rows deleted.
        public var deleted: Int
        /// Rows whose version was bumped without a value change (a changed to-many relationship).
        public var touched: Int
        /// Many-to-many links added.
        public var linked: Int
        /// Many-to-many links removed.
        public var unlinked: Int
        /// Set-based writes the engine ran in the commit (their rows are not in the counts above;
        /// see ``ObjectContext/savedBatches``).
        public var setWrites: Int
        /// ``inserted``, ``updated`` and ``deleted`` per entity name.
        public var byEntity: [String: RowCounts]
        /// How long the successful engine commit took.
        public var duration: Duration
        /// Commits tried before this one succeeded within the save (after merges or a batch's
        /// fresh selection); 0 for most saves.
        public var retriedCommits: Int
    }

    /// A trim of the persistent history.
    public struct HistoryTrim: Sendable, Hashable {
        /// The token the caller asked to delete before.
        public var requestedBefore: Int64
        /// The token the history now starts at (a cursor may have held it back).
        public var keptFrom: Int64
        /// Whether cursors were ignored.
        public var forced: Bool
        /// How long the engine took.
        public var duration: Duration
    }
}
