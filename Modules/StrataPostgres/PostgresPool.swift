import Foundation
import StrataStorage

/// The engine's bounded pool of server connections.
///
/// A lease is a connection checked out for one reader (from `makeReader` to its `close`), or for
/// one short call (a commit, a key reservation, a history call). Readers may hold at most
/// `poolSize - 1` connections: the last one is kept for short calls, which never wait for another
/// lease while they hold theirs. So a context that holds a reader and then commits or reserves
/// keys always gets a connection (the nested-lease deadlock of design §3 cannot happen).
///
/// Broken connections are discarded when they come back; the next checkout opens a new one.
final class PostgresPool: @unchecked Sendable {
    enum LeaseKind { case reader, short }

    let settings: PostgresConnectionSettings
    let options: PostgresOptions
    private let condition = NSCondition()
    // Guarded by `condition`.
    private var idle: [PGConnection] = []
    private var leasedReaders = 0
    private var leasedTotal = 0
    private var closed = false

    init(settings: PostgresConnectionSettings, options: PostgresOptions) {
        self.settings = settings
        self.options = options.boundedTimeouts
    }

    /// The most readers at once.
    private var readerLimit: Int { max(1, options.poolSize - 1) }

    /// A connection for one lease; a new one when none is idle.
    /// - Throws: `.busy` when none frees up within `checkoutTimeout`, `.misuse` after ``close()``,
    ///   a connect failure's error (after retrying up to `connectTimeout` while the server is
    ///   restarting: ``connect()``).
    func checkOut(_ kind: LeaseKind, phase: PostgresError.Phase = .ordinary) throws(StrataError) -> PGConnection {
        let deadline = Date().addingTimeInterval(Self.seconds(options.checkoutTimeout))
        condition.lock()
        while !closed && (leasedTotal >= options.poolSize || (kind == .reader && leasedReaders >= readerLimit)) {
            if !condition.wait(until: deadline) {
                let readersFull = kind == .reader && leasedTotal < options.poolSize
                condition.unlock()
                let inUse =
                    readersFull
                    ? "all \(readerLimit) connections readers may hold (poolSize - 1: one is kept for commits)"
                    : "all \(options.poolSize) connections of the pool"
                throw .busy(
                    """
                    \(settings.location): \(inUse) were in use for longer than checkoutTimeout \
                    (\(options.checkoutTimeout)). If this happens often, raise PostgresOptions.poolSize
                    """)
            }
        }
        guard !closed else {
            condition.unlock()
            throw PostgresError.closed(settings.location)
        }
        leasedTotal += 1
        if kind == .reader { leasedReaders += 1 }
        let reused = idle.popLast()
        condition.unlock()
        if let reused { return reused }
        do {
            return try connect()
        } catch {
            release(kind)
            let typed = PostgresError.error(
                error, sql: nil, phase: phase == .opening ? .opening : .reconnecting, store: settings.location,
                options: options, redacting: settings.secret
            )
            throw Self.serverUnavailable(error) ? afterRetrying(typed) : typed
        }
    }

    /// Returns a connection: kept when idle and healthy, else closed (a failed or open
    /// transaction is rolled back first).
    func checkIn(_ connection: PGConnection, _ kind: LeaseKind) {
        var keep = !connection.isBroken
        if keep, connection.transactionState != .idle {
            keep =
                (try? connection.execute("ROLLBACK", binaryResults: false, deadline: .now + .seconds(5))) != nil
                && connection.transactionState == .idle
        }
        condition.lock()
        if keep && !closed { idle.append(connection) }
        condition.unlock()
        release(kind)
    }

    private func release(_ kind: LeaseKind) {
        condition.lock()
        leasedTotal -= 1
        if kind == .reader { leasedReaders -= 1 }
        condition.broadcast()
        condition.unlock()
    }

    /// Closes idle connections; leased ones close when they come back. Later checkouts throw `.misuse`.
    func close() {
        condition.lock()
        closed = true
        idle.removeAll()
        condition.broadcast()
        condition.unlock()
    }

    var isClosed: Bool {
        condition.lock()
        defer { condition.unlock() }
        return closed
    }

    /// The deadline of one statement: the server's own timeout plus 2 s.
    var statementDeadline: ContinuousClock.Instant { .now + options.statementTimeout + .seconds(2) }

    /// The deadline of `count` statements sent together in one pipeline: each may take the
    /// server's timeout, so the pipeline gets `count` times it, plus 2 s.
    func deadline(forStatements count: Int) -> ContinuousClock.Instant {
        .now + options.statementTimeout * max(count, 1) + .seconds(2)
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}
