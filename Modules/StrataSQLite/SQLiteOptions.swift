/// Tuning for a SQLite store, passed to ``StrataStorage/EngineConfiguration/sqlite(at:options:)``.
///
/// ```swift
/// let options = SQLiteOptions(busyTimeout: .seconds(10), readerCount: 8, synchronous: .normal)
/// let engine = EngineConfiguration.sqlite(at: url, options: options)
/// ```
public struct SQLiteOptions: Sendable, Hashable {
    /// How long one write transaction (a save, a reservation of new keys) may wait, counted
    /// from the moment it is asked, before it fails with `StrataError.busy` having written
    /// nothing. The wait for this process's earlier writes (one at a time on the store's writer
    /// connection) and the wait for another connection's write lock share it. Default: 5 seconds.
    ///
    /// `performUnitOfWork` retries `.busy`: on a store that stays locked a unit of work waits up
    /// to (`RetryPolicy.maxRetries` + 1) × this, plus the back-offs, before
    /// `StrataError.retriesExhausted` (about 4¼ minutes with the defaults).
    public var busyTimeout: Duration
    /// How many idle read connections the engine keeps for reuse. More readers than this may
    /// be open at once; the extra ones close when their reader closes. Default: 4.
    public var readerCount: Int
    /// How hard SQLite flushes to disk at commit. Default: ``Synchronous/full``.
    public var synchronous: Synchronous

    /// SQLite's `PRAGMA synchronous` setting for the store.
    public enum Synchronous: String, Sendable, Hashable {
        /// Every commit is durable even across power loss (`PRAGMA synchronous=FULL`).
        case full = "FULL"
        /// Commits survive application crashes; the last few may be lost on power loss, in
        /// exchange for faster commits (`PRAGMA synchronous=NORMAL`).
        case normal = "NORMAL"
    }

    /// Creates options; every parameter has a safe default.
    ///
    /// ```swift
    /// let fast = SQLiteOptions(synchronous: .normal)
    /// ```
    /// - Parameters:
    ///   - busyTimeout: the longest wait of one write for its turn (default 5 s).
    ///   - readerCount: idle read connections kept for reuse (default 4, at least 1).
    ///   - synchronous: durability of commits (default `.full`).
    public init(busyTimeout: Duration = .seconds(5), readerCount: Int = 4, synchronous: Synchronous = .full) {
        self.busyTimeout = busyTimeout
        self.readerCount = max(readerCount, 1)
        self.synchronous = synchronous
    }

    /// Lowers SQLite's limit on parameters per statement (`SQLITE_LIMIT_VARIABLE_NUMBER`) on
    /// every connection; nil keeps the library's limit. For tests of the paths taken past the
    /// limit on builds whose limit is lower than this machine's.
    var maximumVariables: Int32?

    /// The busy timeout in nanoseconds: negative counts as zero, too long saturates.
    var busyTimeoutNanoseconds: UInt64 {
        let (seconds, attoseconds) = busyTimeout.components
        if seconds < 0 || (seconds == 0 && attoseconds <= 0) { return 0 }
        let (whole, overflow) = UInt64(seconds).multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return .max }
        let (total, fractionOverflow) = whole.addingReportingOverflow(UInt64(max(attoseconds, 0) / 1_000_000_000))
        return fractionOverflow ? .max : total
    }

    /// The busy timeout in whole milliseconds (rounded up), clamped to what SQLite accepts.
    var busyTimeoutMilliseconds: Int32 { Self.milliseconds(busyTimeoutNanoseconds) }

    /// Nanoseconds in whole milliseconds, rounded up (a wait never ends before its deadline)
    /// and clamped to what `sqlite3_busy_timeout` accepts.
    static func milliseconds(_ nanoseconds: UInt64) -> Int32 {
        Int32(clamping: nanoseconds / 1_000_000 + (nanoseconds % 1_000_000 == 0 ? 0 : 1))
    }
}
