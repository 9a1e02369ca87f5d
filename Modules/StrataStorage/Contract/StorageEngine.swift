public import Foundation

/// A storage engine: the narrow contract between Strata's object graph and a store.
///
/// The core builds contexts, identity maps, relationships, validation, delete rules,
/// predicates and retries on top of these few requirements, so every engine gets the same
/// semantics. The conformance kit (`StrataConformance`) is the executable form of this contract.
///
/// ## Implementation requirements
/// - **Thread safety.** An engine is shared by every context of a container and is called from
///   many threads at once. ``commit(_:)`` and ``allocateKeys(entity:count:)`` may be called
///   concurrently; the engine serialises writers itself.
/// - **Errors.** Every failure is thrown as a ``StrataError``: `.conflict` for version
///   mismatches, `.constraintViolation` for unique-index violations, `.storeFull`, `.busy`,
///   `.io`, `.storeCorrupt` and `.notAStore` as they apply, `.misuse` for calls after
///   ``close()``, and ``StrataError/engineFailure(_:)`` for a native result code the engine does
///   not classify. Every case a native failure produces carries a ``NativeError`` (the engine's
///   name, native code, message, and the SQL or operation) as its `native:` payload. A
///   `.constraintViolation` names the entity and the attributes of the clashing unique index from
///   the ``StoreSchema``. Never trap on bad data.
/// - **Lifetime.** Nothing above the engine closes it when the last user lets go: the container
///   calls ``close()`` only when the app asks (`PersistentContainer.close()`), and otherwise
///   simply releases the engine. So an engine must release its files, handles and threads in
///   its own `deinit` too (calling ``close()`` there is the usual way), or they stay held for
///   the life of the process. ``close()`` may be called while other threads are reading and
///   committing: it must not pull anything from under a reader or commit already under way.
///   Those finish normally or throw `.misuse`, having written nothing; they never crash or
///   hang.
/// - **Metadata.** A store records its ``storeIdentifier`` and schema version at creation;
///   opening it again returns the same identifier. It records ``StoreSchema/recorded`` as JSON
///   too, and every open passes what it recorded to
///   ``StoreSchema/reconcileRecorded(storeVersion:recordedJSON:path:session:)`` inside its opening
///   write transaction, before touching anything else: the same version with another shape is
///   refused with `.schemaMismatch`, a newer store with `.storeNewerThanModel`, and an older one
///   is migrated through the engine's ``StoreMigrationSession``.
///
/// Engines are created by an ``EngineConfiguration``, e.g. `.sqlite(at:)` or `.lmdb(at:)`.
public protocol StorageEngine: AnyObject, Sendable {
    /// The store's UUID, created with the store and stable for its life. Object URIs carry it.
    var storeIdentifier: UUID { get }

    /// The schema version recorded in the store.
    var schemaVersion: Int { get }

    /// Begins a read snapshot.
    ///
    /// Every read through the returned reader sees one consistent, committed state of the
    /// store: commits that finish after this call are invisible to it. The reader is used
    /// by one thread at a time (not necessarily the same thread each time) and is closed
    /// with ``StoreReader/close()``.
    /// - Throws: ``StrataError`` (`.busy`, `.io`, `.storeCorrupt`, `.engineFailure`), and
    ///   `.misuse` after ``close()``.
    func makeReader() throws -> any StoreReader

    /// Commits a change set atomically, checking every row version.
    ///
    /// Either every write in `changes` becomes durable and visible to later readers, or none
    /// does. For each update, touch, delete and verify, the stored version must equal
    /// `expectedVersion`, and for each insert the key must be unused; otherwise nothing is
    /// written and the engine throws ``StrataError/conflict(_:)`` listing every mismatch it found.
    /// Updates and touches store `expectedVersion + 1`; inserts store version 1. A verify
    /// (``ChangeSet/verifies``) only checks, inside the same transaction, and writes nothing:
    /// a change set of verifies alone commits nothing but can still throw `.conflict`.
    ///
    /// Each result guard (``ChangeSet/resultGuards``) must hold at the commit's serialization
    /// point: the rows of its entity matching its filter (reference semantics of ``Filter``;
    /// ``ResultSetGuard/plan``) are exactly its expected keys, each at its expected version.
    /// An engine with one writer at a time (SQLite, LMDB) re-runs the filter inside the write
    /// transaction before writing and compares (``ResultSetGuard/check(with:storeIdentifier:entityName:)``);
    /// an engine with concurrent writers must also stop two commits that each pass their check
    /// from both committing when each writes into the other's guarded set (PostgreSQL runs such a
    /// commit `SERIALIZABLE` and reports the server's serialization failure as `.conflict`). A
    /// mismatch is a conflict listing the rows that appeared, vanished or changed
    /// (``ResultSetGuard/conflicts(found:storeIdentifier:entityName:)``); nothing is written. A
    /// change set of guards alone commits nothing but can still throw `.conflict`.
    /// - Throws: `.conflict`, `.constraintViolation`, `.storeFull`, `.busy`, `.io`, `.storeCorrupt`,
    ///   `.engineFailure` for a native result code the engine does not classify, and `.misuse`
    ///   after ``close()`` or for a change set that does not fit the store's schema (an unknown
    ///   entity, a wrong number or storage class of values).
    func commit(_ changes: ChangeSet) throws

    /// Reserves `count` fresh primary keys for an entity, durable across processes.
    ///
    /// Keys are positive, never reused, and unique across every process that opens the
    /// store; gaps are allowed. Used to turn temporary object IDs into permanent ones.
    /// - Throws: `.storeFull`, `.busy`, `.io`, `.engineFailure`, and `.misuse` after ``close()``
    ///   or for an unknown entity or a negative count (a count of 0 gives an empty range).
    func allocateKeys(entity: Int, count: Int) throws -> Range<Int64>

    /// Closes the engine at the app's request: later calls to ``makeReader()``, ``commit(_:)``
    /// and ``allocateKeys(entity:count:)`` throw `.misuse`. Idempotent.
    ///
    /// It may run while other threads read and commit, and must not invalidate work already
    /// under way: a reader made before `close()` keeps reading its snapshot until its own
    /// ``StoreReader/close()``, and a commit already begun either completes or throws `.misuse`
    /// having written nothing. Resources still used by them are released when they end.
    ///
    /// The core calls it only from `PersistentContainer.close()`. An engine that is simply
    /// released is never closed from above, so it must also release its resources in its own
    /// `deinit`.
    func close()
}

/// A read snapshot of a store, confined to one context's `perform` at a time.
///
/// All methods read the same committed state, fixed when the reader was made.
/// Rows decode straight into ``StoredRow``; a stored value that cannot be decoded is reported
/// as ``StrataError/storeCorrupt(_:native:)``, never returned as wrong data.
public protocol StoreReader: AnyObject {
    /// The row with this primary key, or nil.
    func row(entity: Int, key: Int64) throws -> StoredRow?

    /// The rows a plan selects, in the plan's order (see ``FetchPlan``).
    func rows(for plan: FetchPlan) throws -> [StoredRow]

    /// Calls `body` with each row a plan selects, in the plan's order, as the row is read.
    ///
    /// The same rows as ``rows(for:)``, delivered one at a time so that a large fetch turns
    /// each row into an object while the row is still in the processor's cache. `body` must not
    /// call the reader. A default implementation calls ``rows(for:)``; engines that can stream
    /// should implement it.
    /// - Throws: the errors of ``rows(for:)``, and whatever `body` throws (reading stops).
    func forEachRow(for plan: FetchPlan, _ body: (StoredRow) throws -> Void) throws

    /// How many rows match `filter` (all rows when nil).
    func count(entity: Int, filter: Filter?) throws -> Int

    /// The aggregates of the rows a plan selects, one ``AggregateRow`` per group, groups in
    /// ascending order of their values (the semantics of ``AggregateFunction`` and
    /// ``AggregatePlan``).
    ///
    /// Computed where the rows are, without building objects, in memory bounded by the number of
    /// groups. A default implementation folds ``forEachRow(for:_:)`` through an
    /// ``AggregateAccumulator``; engines with a query language run it there.
    /// - Throws: the errors of ``rows(for:)``, and `.validation` for an integer sum past `Int64`
    ///   (``AggregateAccumulator/sumOverflowMessage``).
    func aggregate(_ plan: AggregatePlan) throws -> [AggregateRow]

    /// How many rows a plan will select, if the engine knows without reading them (a table's
    /// entry count, say); nil otherwise. A fetch uses it only to make room for its results, so
    /// an estimate is fine. A default implementation returns nil.
    func expectedRowCount(for plan: FetchPlan) -> Int?

    /// The keys linked to `key` through a many-to-many join, ascending.
    /// - Parameters:
    ///   - join: the join's number in the store schema (``JoinSchema/number``).
    ///   - side: the side `key` belongs to; the keys of the other side are returned.
    ///   - key: the primary key whose links are wanted.
    func linkedKeys(join: Int, from side: JoinSide, key: Int64) throws -> [Int64]

    /// Calls `body(key, linked)` for every link of a many-to-many join whose `side` key is one of
    /// `keys`: the links of ``linkedKeys(join:from:key:)`` for many keys in one pass, used to load a
    /// relationship for a whole fetch result at once (batch faulting and prefetching).
    ///
    /// `keys` is ascending with no duplicates. Links arrive grouped by `key`, keys ascending, and
    /// within a key by `linked` ascending. `body` must not call the reader. A default
    /// implementation calls ``linkedKeys(join:from:key:)`` per key; engines that can read the
    /// join once should implement it.
    /// - Throws: the errors of ``linkedKeys(join:from:key:)``, and whatever `body` throws (reading
    ///   stops).
    func forEachLink(join: Int, from side: JoinSide, keys: [Int64], _ body: (Int64, Int64) throws -> Void) throws

    /// Ends the snapshot. Idempotent; the reader is not used afterwards.
    func close()
}

extension StoreReader {
    /// Delivers the rows of ``rows(for:)`` one at a time.
    public func forEachRow(for plan: FetchPlan, _ body: (StoredRow) throws -> Void) throws {
        for row in try rows(for: plan) { try body(row) }
    }

    /// Unknown: nil.
    public func expectedRowCount(for plan: FetchPlan) -> Int? { nil }

    /// Folds the plan's rows through an ``AggregateAccumulator``, one row at a time.
    public func aggregate(_ plan: AggregatePlan) throws -> [AggregateRow] {
        var accumulator = AggregateAccumulator(plan)
        try forEachRow(for: FetchPlan(entity: plan.entity, filter: plan.filter, inKeyOrder: false)) { row in
            try accumulator.add(row.values)
        }
        return try accumulator.checkedRows()
    }

    /// Reads the links of each key with ``linkedKeys(join:from:key:)``.
    public func forEachLink(
        join: Int, from side: JoinSide, keys: [Int64], _ body: (Int64, Int64) throws -> Void
    ) throws {
        for key in keys {
            for linked in try linkedKeys(join: join, from: side, key: key) { try body(key, linked) }
        }
    }
}
