import StrataStorage

/// Tuning for a PostgreSQL store, passed to
/// ``StrataStorage/EngineConfiguration/postgres(url:schema:options:)``.
///
/// Every timeout is on by default, so a dead server or a lost network never hangs a caller:
/// the operation in flight fails with a typed error instead.
///
/// ```swift
/// let options = PostgresOptions(poolSize: 16, lockTimeout: .seconds(2))
/// let engine = EngineConfiguration.postgres(
///     url: "postgresql://app@db.internal:5432/ledger", schema: "books", options: options)
/// ```
public struct PostgresOptions: Sendable, Hashable {
    /// The most connections the engine holds open to the server at once (readers, commits and
    /// key reservations each lease one while they run). Readers hold at most `poolSize - 1`:
    /// the last connection is kept for commits, so with 2 only one read runs at a time.
    /// Opening refuses fewer than 2 with `StrataError.misuse`. Default: 8.
    public var poolSize: Int
    /// How long opening one connection may take before it fails with `StrataError.io`
    /// (`StrataError.busy` for a store already open). A server that is starting up, shutting
    /// down or cannot be reached (a restart) is tried again, with a short backoff, until this
    /// has passed since the first try, so an open during a restart waits for the server. libpq
    /// counts whole seconds and waits at least 2 seconds for one try; shorter values are rounded
    /// up to 2. Default: 5 seconds.
    public var connectTimeout: Duration
    /// How long one statement may run on the server (`statement_timeout`) before it is
    /// cancelled with `StrataError.busy`. Counted in whole milliseconds; longer than about
    /// 24.8 days (PostgreSQL's largest) counts as that. Default: 30 seconds.
    public var statementTimeout: Duration
    /// How long a commit may wait for a row or table lock another transaction holds
    /// (`lock_timeout`) before it fails with `StrataError.busy` having written nothing.
    /// The analogue of the embedded engines' busy timeout. Default: 5 seconds.
    public var lockTimeout: Duration
    /// How long an operation may wait for a free pooled connection before it fails with
    /// `StrataError.busy`. Default: 5 seconds.
    public var checkoutTimeout: Duration
    /// How long a commit whose reply was lost (the connection dropped, or the server stopped
    /// answering within `statementTimeout`) may spend finding out, on a new connection, whether it
    /// was applied: it returns normally when it was, throws `StrataError.busy` (retried by
    /// `performUnitOfWork`) when it was not and never will be, and throws
    /// `StrataError.commitOutcomeUnknown` only when the server could not be asked within this
    /// time. Default: 30 seconds.
    public var commitResolutionTimeout: Duration
    /// What opening does when the schema does not exist yet. Default: ``Creation/createSchema``.
    public var creation: Creation
    /// The `application_name` the server shows for the engine's connections (in
    /// `pg_stat_activity`), at most 63 bytes. Default: `"strata"`.
    public var applicationName: String

    /// What opening a store does when its schema is missing.
    public enum Creation: Sendable, Hashable {
        /// Create the schema and the store in it (like a missing SQLite file, the store is made).
        case createSchema
        /// Refuse: a missing schema, or one that holds no store yet (no tables), is
        /// `StrataError.notAStore`. For deployments where a migration tool or a DBA creates the
        /// store and the service must never make one.
        case requireExistingSchema
    }

    /// Creates options; every parameter has a safe default. Opening a store checks them: a
    /// timeout that is not positive, or an application name over 63 bytes, is
    /// `StrataError.misuse`.
    ///
    /// ```swift
    /// let strict = PostgresOptions(creation: .requireExistingSchema)
    /// ```
    /// - Parameters:
    ///   - poolSize: the most connections held open at once (default 8; at least 2, or opening
    ///     throws `StrataError.misuse`).
    ///   - connectTimeout: the longest wait for one new connection, tries again while the server
    ///     restarts included (default 5 s, at least 2 s).
    ///   - statementTimeout: the longest run of one statement (default 30 s).
    ///   - lockTimeout: the longest wait of a commit for a lock (default 5 s).
    ///   - checkoutTimeout: the longest wait for a pooled connection (default 5 s).
    ///   - commitResolutionTimeout: the longest search for the outcome of a commit whose reply was
    ///     lost (default 30 s).
    ///   - creation: what to do when the schema is missing (default `.createSchema`).
    ///   - applicationName: the name the server shows for the connections (default `"strata"`).
    public init(
        poolSize: Int = 8,
        connectTimeout: Duration = .seconds(5),
        statementTimeout: Duration = .seconds(30),
        lockTimeout: Duration = .seconds(5),
        checkoutTimeout: Duration = .seconds(5),
        commitResolutionTimeout: Duration = .seconds(30),
        creation: Creation = .createSchema,
        applicationName: String = "strata"
    ) {
        self.poolSize = poolSize
        self.connectTimeout = connectTimeout
        self.statementTimeout = statementTimeout
        self.lockTimeout = lockTimeout
        self.checkoutTimeout = checkoutTimeout
        self.commitResolutionTimeout = commitResolutionTimeout
        self.creation = creation
        self.applicationName = applicationName
    }
}

extension PostgresOptions {
    /// The largest timeout the server and libpq take: 2,147,483,647 ms (a C `int`), about 24.8 days.
    static let largestTimeout = Duration.milliseconds(PostgresConnectionSettings.largestMilliseconds)

    /// These options with every timeout at most ``largestTimeout``, so deadlines computed from
    /// them never overflow.
    var boundedTimeouts: PostgresOptions {
        var bounded = self
        bounded.connectTimeout = min(connectTimeout, Self.largestTimeout)
        bounded.statementTimeout = min(statementTimeout, Self.largestTimeout)
        bounded.lockTimeout = min(lockTimeout, Self.largestTimeout)
        bounded.checkoutTimeout = min(checkoutTimeout, Self.largestTimeout)
        bounded.commitResolutionTimeout = min(commitResolutionTimeout, Self.largestTimeout)
        return bounded
    }

    /// Refuses options no store can run with, before any connection is made.
    /// - Throws: `.misuse` naming the option, for a pool of fewer than 2 connections, a timeout
    ///   that is not positive, or an application name PostgreSQL would cut or refuse.
    func validate(store: String) throws(StrataError) {
        guard poolSize >= 2 else {
            throw .misuse(
                """
                PostgresOptions.poolSize is \(poolSize): use at least 2 (one connection is kept for commits while \
                readers hold the others) (store \(store))
                """)
        }
        let timeouts = [
            ("connectTimeout", connectTimeout), ("statementTimeout", statementTimeout),
            ("lockTimeout", lockTimeout), ("checkoutTimeout", checkoutTimeout),
            ("commitResolutionTimeout", commitResolutionTimeout),
        ]
        for (name, timeout) in timeouts where timeout <= .zero {
            throw .misuse(
                """
                PostgresOptions.\(name) is \(timeout): use a positive duration (timeouts longer than about 24.8 days \
                count as that) (store \(store))
                """)
        }
        let nameBytes = applicationName.utf8.count
        let hasNUL = applicationName.utf8.contains(0)
        guard nameBytes <= 63, !hasNUL else {
            throw .misuse(
                """
                PostgresOptions.applicationName has \(nameBytes) bytes\(hasNUL ? " and a NUL" : ""): use at most 63 \
                bytes without NUL, the most PostgreSQL keeps (store \(store))
                """)
        }
    }
}
