import StrataStorage

/// One leased connection and what its statements need to report errors: the unit every engine
/// operation (open, reader, commit, keys, history, migration) runs its SQL through.
///
/// ```swift
/// let result = try session.run("SELECT value FROM \(metadata) WHERE key = $1", [.rawText("schema_version")])
/// ```
struct PostgresSession {
    let connection: PGConnection
    let pool: PostgresPool

    /// The store's location without the password, for messages.
    var store: String { pool.settings.location }

    /// Runs one statement with binary parameters and results, mapping failures to `StrataError`.
    /// - Throws: the typed error of ``PostgresError/error(_:sql:phase:store:options:redacting:)``.
    @discardableResult
    func run(
        _ sql: String, _ parameters: [PGParameter] = [], phase: PostgresError.Phase = .ordinary
    ) throws(StrataError) -> PGResult {
        do {
            return try connection.execute(sql, parameters, binaryResults: true, deadline: pool.statementDeadline)
        } catch {
            throw PostgresError.error(
                error, sql: sql, phase: phase, store: store, options: pool.options, redacting: pool.settings.secret)
        }
    }

    /// Runs `statements` in one round trip (``PGConnection/executePipeline(_:deadline:)``), mapping a
    /// failure to `StrataError` with the SQL of the statement that failed, or of the statement at
    /// `main` when the failure names none (a timeout, a lost connection).
    func runPipeline(_ statements: [PGConnection.PipelinedStatement], main: Int) throws(StrataError) -> [PGResult] {
        do {
            return try connection.executePipeline(statements, deadline: pool.statementDeadline)
        } catch {
            let index = error.pipelineIndex ?? main
            throw PostgresError.error(
                error, sql: statements.indices.contains(index) ? statements[index].sql : nil, phase: .ordinary,
                store: store, options: pool.options, redacting: pool.settings.secret)
        }
    }

    /// Runs `statements` in one round trip, each given the server's statement timeout (the
    /// pipeline's deadline is their sum, plus 2 s, unless `deadline` is given), returning the
    /// results of those before the first failure and that failure untranslated
    /// (``PGConnection/executePipelineKeepingResults(_:deadline:)``).
    func runPipelineRaw(
        _ statements: [PGConnection.PipelinedStatement], deadline: ContinuousClock.Instant? = nil
    ) -> (results: [PGResult], failure: PGFailure?) {
        connection.executePipelineKeepingResults(
            statements, deadline: deadline ?? pool.deadline(forStatements: statements.count))
    }

    /// Runs parameterless SQL (one or several statements) in one round trip, mapping failures to
    /// `StrataError`.
    func runScript(_ sql: String) throws(StrataError) {
        do {
            _ = try connection.executeScript(sql, deadline: pool.statementDeadline)
        } catch {
            throw PostgresError.error(
                error, sql: sql, phase: .ordinary, store: store, options: pool.options, redacting: pool.settings.secret)
        }
    }

    /// Runs one statement, returning libpq's failure untranslated (for callers that read the SQLSTATE).
    @discardableResult
    func runRaw(_ sql: String, _ parameters: [PGParameter] = []) throws(PGFailure) -> PGResult {
        try connection.execute(sql, parameters, binaryResults: true, deadline: pool.statementDeadline)
    }

    /// The error of a raw failure.
    func error(_ failure: PGFailure, sql: String?, phase: PostgresError.Phase = .ordinary) -> StrataError {
        PostgresError.error(
            failure, sql: sql, phase: phase, store: store, options: pool.options, redacting: pool.settings.secret)
    }

    /// Rolls back whatever transaction is open, ignoring failures (the pool drops a broken connection).
    func rollbackQuietly() {
        _ = try? connection.execute("ROLLBACK", binaryResults: false, deadline: pool.statementDeadline)
    }

    /// The first column of the first row as an integer, nil for no row or NULL.
    func int64(_ sql: String, _ parameters: [PGParameter] = []) throws(StrataError) -> Int64? {
        let result = try run(sql, parameters)
        guard result.rowCount > 0 else { return nil }
        return result.int64(0, 0)
    }
}
