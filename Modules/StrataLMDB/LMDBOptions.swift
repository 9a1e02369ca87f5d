import StrataStorage

/// Tuning for an LMDB store, passed to ``StrataStorage/EngineConfiguration/lmdb(at:options:)``.
///
/// The defaults suit most stores; a test can start with a tiny map to exercise map growth.
///
/// ```swift
/// let options = LMDBOptions(initialMapSize: 1 << 20, maximumMapSize: 1 << 30, busyTimeout: .seconds(2))
/// let engine = EngineConfiguration.lmdb(at: directory, options: options)
/// ```
public struct LMDBOptions: Sendable, Hashable {
    /// The size of the memory map when the store is opened, in bytes (rounded up to whole
    /// pages). It is also the most the file can hold until the map grows. Default 1 GiB.
    ///
    /// The map is address space, not memory or disk: Strata maps the file read-only and shared
    /// (no `MDB_WRITEMAP`), so on 64-bit Linux the file grows with the data, not with the map,
    /// and only the pages read count in the resident set. A save that will not fit grows the map
    /// before it writes, to twice what it needs; a save whose estimate was short grows it
    /// fourfold and runs again.
    public var initialMapSize: Int
    /// The largest the map may grow to, in bytes. A commit that does not fit even at this size
    /// fails with `StrataError.storeFull` and writes nothing. Default 64 GiB.
    public var maximumMapSize: Int
    /// How many times one commit may grow the map after hitting `MDB_MAP_FULL` (each time
    /// fourfold, up to ``maximumMapSize``) before it gives up with `StrataError.storeFull`.
    /// Default 16.
    public var maxMapGrowthRetries: Int
    /// How many read snapshots may be open at once across every process using the store
    /// (LMDB's reader table; each `perform` that reads holds one slot until it returns). Only
    /// the first process to open the store (when no process has it open) sets it. Default
    /// 1,024: more than the performs one process can run at once on Dispatch's thread pool, so
    /// the documented pattern (any number of concurrent `perform`s) does not run out of slots
    /// in one process or a few; past it, a read gets `StrataError.busy`. A process keeps no slot
    /// while it has no snapshot open.
    public var maxReaders: Int
    /// How long a write (a save, a key reservation, opening the store) may wait, counted from
    /// the moment it is asked, before it fails with `StrataError.busy` having written nothing.
    /// The wait for this process's earlier writes (one at a time on the store's writer thread)
    /// and the wait for another process's write or open share it. Default 5 s, like
    /// `SQLiteOptions.busyTimeout`. Processes that write the store with other LMDB tools do not
    /// take Strata's write lock; a write waiting for them waits without bound.
    ///
    /// `performUnitOfWork` retries `.busy`: on a store that stays locked a unit of work waits up
    /// to (`RetryPolicy.maxRetries` + 1) × this, plus the back-offs, before
    /// `StrataError.retriesExhausted` (about 4¼ minutes with the defaults).
    public var busyTimeout: Duration

    /// Creates options; every parameter has the documented default.
    public init(
        initialMapSize: Int = 1 << 30,
        maximumMapSize: Int = 64 << 30,
        maxMapGrowthRetries: Int = 16,
        maxReaders: Int = 1024,
        busyTimeout: Duration = .seconds(5)
    ) {
        self.initialMapSize = initialMapSize
        self.maximumMapSize = maximumMapSize
        self.maxMapGrowthRetries = maxMapGrowthRetries
        self.maxReaders = maxReaders
        self.busyTimeout = busyTimeout
    }
}

extension LMDBOptions {
    /// The `.storeFull` of a write that hit `MDB_MAP_FULL` and may not grow the map again. The
    /// advice depends on which limit stopped it: at ``maximumMapSize`` (`limit`, rounded up to
    /// pages) it is the limit, not the disk, that is full, so raise it or delete data; below it,
    /// the commit used up its ``maxMapGrowthRetries``.
    /// - Parameters:
    ///   - context: what was being written.
    ///   - mapSize: the map's size in bytes when it was full.
    ///   - growths: how many times this write grew the map.
    ///   - native: LMDB's `MDB_MAP_FULL`, as the cause.
    func mapFullError(
        _ context: String, mapSize: Int, limit: Int, growths: Int, native: NativeError
    ) -> StrataError {
        let grown = growths == 0 ? "" : " after growing it \(growths) time\(growths == 1 ? "" : "s") for this write"
        if mapSize >= limit {
            return .storeFull(
                """
                \(context): the LMDB map reached LMDBOptions.maximumMapSize (\(maximumMapSize) bytes)\(grown), so \
                the store's size limit is full, not the disk. Open the store with a larger maximumMapSize, or \
                delete data.
                """,
                native: native)
        }
        return .storeFull(
            """
            \(context): the LMDB map is full at \(mapSize) bytes\(grown), and LMDBOptions.maxMapGrowthRetries \
            (\(maxMapGrowthRetries)) allows no more growth for one write (maximumMapSize is \(maximumMapSize) \
            bytes). Raise maxMapGrowthRetries or initialMapSize.
            """,
            native: native)
    }
}
