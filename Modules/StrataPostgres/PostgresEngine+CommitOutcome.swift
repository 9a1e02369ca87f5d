import Foundation
import StrataStorage
import Synchronization

/// Commits whose outcome is never guessed (issue 24).
///
/// A `COMMIT` whose reply is lost (the connection dropped, the server stopped answering past the
/// statement's deadline) may have been applied or not, and a stalled backend may still apply it
/// later, when it reads the `COMMIT` waiting in its socket. So each commit carries an identity:
/// a random UUID inserted into `strata_commits` in the same message as the `COMMIT`, hence in the
/// same transaction. After an ambiguous failure the engine settles the outcome on a new
/// connection:
///
/// 1. it asks the server to terminate the old backend (`pg_terminate_backend`), so a session
///    that is idle or stalled in its transaction ends instead of lingering;
/// 2. it inserts the same UUID itself (the *fence*). A unique index makes that insert wait for
///    the old transaction while it is in progress, then:
///    - it fails with a unique violation: the old transaction committed. The save succeeded, and
///      the commit returns normally;
///    - it succeeds: the old transaction rolled back (or never reached the insert), and the
///      fence, now committed, means it can never commit later. Nothing was applied: `.busy`,
///      which `performUnitOfWork` retries safely.
///
/// Only when the server stays out of reach past ``PostgresOptions/commitResolutionTimeout`` does
/// the caller get ``StrataError/commitOutcomeUnknown(_:native:)``, whose message names the
/// identity to look up.
///
/// `strata_commits` keeps an identity for ``retention`` (pruned at most once a
/// ``pruneInterval`` by each engine); a fence is only trusted within ``conclusiveWindow`` of the
/// `COMMIT`, well inside the retention, so a pruned identity is never mistaken for a rollback.
extension PostgresEngine {
    /// How long `strata_commits` keeps an identity.
    static let retention: Duration = .seconds(15 * 60)
    /// How long after its `COMMIT` a commit's outcome may still be settled by a fence.
    static let conclusiveWindow: Duration = .seconds(10 * 60)
    /// How often one engine prunes `strata_commits`.
    static let pruneInterval: Duration = .seconds(60)

    /// The statements that make `strata_commits` (at store creation, or at the first open of a
    /// store made before it existed): the identity, the moment it was written, and a BRIN index
    /// on the moment for pruning (cheap to keep up, as rows arrive in time order).
    static func createCommitsTable(_ names: PostgresStoreNames) -> [String] {
        [
            """
            CREATE TABLE \(names.commits) (id uuid CONSTRAINT strata_commits_pkey PRIMARY KEY, \
            "at" timestamptz NOT NULL DEFAULT clock_timestamp())
            """,
            "CREATE INDEX strata_commits_at ON \(names.commits) USING brin (\"at\")",
        ]
    }

    /// Commits the transaction open on `session`, sending its identity with the `COMMIT` in one
    /// round trip, and settles the outcome of a lost reply (see the extension's notes).
    ///
    /// `history`, when given, is appended in the same round trip, first (``historyAppend(_:)``):
    /// the history clock's row lock, which orders every commit with history, is then held only
    /// while the server runs the append, the identity and the `COMMIT`, not across a round trip.
    /// When the append fails, the server skips the rest and the transaction is rolled back.
    ///
    /// Returns when the transaction committed. A failure the server reported on a live
    /// connection (the history clock spent, a serialization failure at commit, a full disk)
    /// rolled the transaction back and is thrown as usual.
    /// - Throws: `.busy` when the commit was checked and not applied (retry), and
    ///   `.commitOutcomeUnknown` when the server could not be asked in time; `.storeFull` when the
    ///   history clock gives no token; `.misuse` when the history record does not encode.
    func commitIdentified(_ session: PostgresSession, appending history: HistoryRecord? = nil) throws(StrataError) {
        let identity = UUID()
        var statements: [PGConnection.PipelinedStatement] = []
        if let history {
            do throws(StrataError) {
                let append = try historyAppend(history)
                statements.append(.init(sql: append.sql, parameters: append.parameters()))
            } catch {
                session.rollbackQuietly()
                throw error
            }
        }
        statements.append(.init(sql: identityInsert, parameters: [.rawText(identity.uuidString)]))
        statements.append(.init(sql: "COMMIT"))
        let sent = ContinuousClock.now
        // One statement's deadline, as for the COMMIT alone before (Docs/Deploying.md), plus
        // lockTimeout when the append may wait for the clock's lock, so that wait is not taken
        // from the COMMIT's time.
        let commitIndex = statements.count - 1
        let deadline = pool.statementDeadline + (history == nil ? .zero : pool.options.lockTimeout)
        guard let failure = session.runPipelineRaw(statements, deadline: deadline).failure else {
            // The append inserted its row or failed (a clock that gives no token fails it), so a
            // committed transaction has its history.
            pruneCommitsIfDue(session)
            return
        }
        if let index = failure.pipelineIndex, index < commitIndex, failure.sqlState != nil {
            // The server refused a statement before the COMMIT (or its preparation), so it skipped
            // the COMMIT: nothing was committed, whatever became of the connection. (A failure
            // libpq made up, without a SQLSTATE, says only which results had arrived: settled.)
            session.rollbackQuietly()
            if history != nil, index == 0 { throw historyFailure(failure, sql: statements[0].sql, session: session) }
            throw session.error(failure, sql: statements[index].sql)
        }
        if !Self.isAmbiguous(failure) {
            // The server refused the COMMIT itself (a serialization failure, a full disk): the
            // transaction ended, rolled back. (A failure that names no statement is rolled back
            // too, to be safe; a ROLLBACK outside a transaction changes nothing.)
            if failure.pipelineIndex == nil { session.rollbackQuietly() }
            throw session.error(failure, sql: "COMMIT")
        }
        let backend = session.connection.backendPID
        if try settleCommit(identity, backend: backend, sent: sent, failure: failure) { return }
        throw .busy(
            """
            \(location): the reply to COMMIT was lost (\(failure.message)); the engine checked on a new \
            connection and the commit was not applied (its session was ended, so it never will be)
            """,
            native: PostgresError.native(
                failure, sql: "COMMIT", operation: "committing", redacting: pool.settings.secret))
    }

    /// Inserts a commit's identity: in its transaction, and as the fence that settles it.
    private var identityInsert: String { "INSERT INTO \(names.commits) (id) VALUES ($1::uuid)" }

    /// Whether a `COMMIT`'s failure leaves its outcome open: no answer (a lost connection, a
    /// deadline), a broken connection, or a server that said the connection or the statement's
    /// completion is in doubt. An error the server reported on a live connection is a rollback.
    static func isAmbiguous(_ failure: PGFailure) -> Bool {
        guard let state = failure.sqlState, !failure.timedOut, !failure.connectionBroken else { return true }
        return state.hasPrefix("08") || state == "40003" || state.hasPrefix("57P")
    }

    /// Settles whether the transaction that inserted `identity` committed: true when it did,
    /// false when it did not and never will.
    /// - Throws: `.commitOutcomeUnknown` when it could not be settled within
    ///   ``PostgresOptions/commitResolutionTimeout`` (or past ``conclusiveWindow``).
    func settleCommit(
        _ identity: UUID, backend: Int, sent: ContinuousClock.Instant, failure: PGFailure
    ) throws(StrataError) -> Bool {
        let deadline = ContinuousClock.now + pool.options.commitResolutionTimeout
        var last = failure
        while true {
            let now = ContinuousClock.now
            let left = min(deadline, sent + Self.conclusiveWindow) - now
            guard left > .zero else { break }
            do throws(PGFailure) {
                let connection = try PGConnection(keywords: pool.settings.keywords)
                let statementDeadline = now + left
                // Best effort: ends the old session if it still exists (a stalled backend ends when it
                // resumes). Filtered by application name, so a reused process id is left alone.
                _ = try? connection.execute(
                    """
                    SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid = $1::int4 \
                    AND application_name = $2 AND pid <> pg_backend_pid()
                    """, [.int8(Int64(backend)), .rawText(pool.options.applicationName)],
                    deadline: statementDeadline)
                let milliseconds = max(1, PostgresConnectionSettings.milliseconds(left))
                _ = try connection.executeScript(
                    "SET lock_timeout = \(milliseconds); SET statement_timeout = \(milliseconds)",
                    deadline: statementDeadline)
                do throws(PGFailure) {
                    _ = try connection.execute(
                        identityInsert, [.rawText(identity.uuidString)],
                        deadline: statementDeadline + .seconds(1))
                    return false
                } catch  where error.sqlState == "23505" {
                    return true
                }
            } catch {
                last = error
            }
            let pause = min(.milliseconds(200), deadline - ContinuousClock.now)
            if pause > .zero { Thread.sleep(forTimeInterval: PostgresPool.seconds(pause)) }
        }
        let native = PostgresError.native(
            last, sql: nil, operation: "settling a lost COMMIT", redacting: pool.settings.secret)
        throw .commitOutcomeUnknown(
            """
            \(location): the reply to COMMIT was lost (\(failure.message)) and the server could not be asked \
            within commitResolutionTimeout (\(pool.options.commitResolutionTimeout)) whether it was applied. The \
            commit's identity is \(identity.uuidString): once the server answers again and the session is gone \
            (pg_stat_activity has no pid \(backend)), the commit was applied if and only if \(names.commits) \
            holds that id (kept for \(Self.retention.components.seconds / 60) minutes)
            """, native: native)
    }

    /// Deletes identities older than ``retention``, at most once a ``pruneInterval`` per engine,
    /// after a commit on the same lease. A failure is ignored: the next commit tries again.
    func pruneCommitsIfDue(_ session: PostgresSession) {
        let now = ContinuousClock.now
        let due = lastCommitPrune.withLock { last in
            guard last.map({ now - $0 >= Self.pruneInterval }) ?? true else { return false }
            last = now
            return true
        }
        guard due else { return }
        _ = try? session.runRaw(
            "DELETE FROM \(names.commits) WHERE \"at\" < clock_timestamp() - $1::int8 * interval '1 second'",
            [.int8(Self.retention.components.seconds)])
    }
}
