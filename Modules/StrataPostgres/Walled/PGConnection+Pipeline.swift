// Walled file (strict memory safety): several statements in one round trip, through libpq's
// pipeline mode (PQenterPipelineMode, PQpipelineSync, PQexitPipelineMode).
import CPostgres
import Foundation

extension PGConnection {
    /// One statement of a pipeline: its SQL and its parameters (sent in binary, as by
    /// ``execute(_:_:binaryResults:deadline:)``; results come in binary).
    struct PipelinedStatement {
        var sql: String
        var parameters: [PGParameter] = []
    }

    /// Runs `statements` in one round trip and returns their results, in order.
    ///
    /// A statement with parameters is prepared first, once per connection, as `execute` does
    /// (that preparation is a round trip of its own, the first time only). The server runs the
    /// statements one after another; when one fails it skips the rest, and the first failure is
    /// thrown once every result has been read, with ``PGFailure/pipelineIndex`` naming the
    /// statement (also when its preparation failed). Waits at most until `deadline`, as `execute`
    /// does: past it, the statement running is cancelled and the connection abandoned.
    ///
    /// ```swift
    /// let results = try connection.executePipeline(
    ///     [.init(sql: "DECLARE c NO SCROLL CURSOR FOR SELECT …", parameters: [.int8(7)]),
    ///      .init(sql: "FETCH 2000 FROM c")],
    ///     deadline: .now + .seconds(30))
    /// ```
    /// - Throws: ``PGFailure`` for the first statement that failed, or a lost connection.
    func executePipeline(
        _ statements: [PipelinedStatement], deadline: ContinuousClock.Instant
    ) throws(PGFailure) -> [PGResult] {
        let outcome = executePipelineKeepingResults(statements, deadline: deadline)
        if let failure = outcome.failure { throw failure }
        return outcome.results
    }

    /// Runs `statements` in one round trip as ``executePipeline(_:deadline:)`` does, and returns
    /// the results of the statements that succeeded before the first failure (all of them when
    /// there is none) together with that failure, for a caller that must read the results of
    /// the statements before the one that failed.
    func executePipelineKeepingResults(
        _ statements: [PipelinedStatement], deadline: ContinuousClock.Instant
    ) -> (results: [PGResult], failure: PGFailure?) {
        guard !abandoned else { return ([], Self.abandonedFailure) }
        var names: [String?] = []
        for (index, statement) in statements.enumerated() {
            do {
                names.append(try preparedName(statement.sql, statement.parameters, deadline: deadline))
            } catch {
                var failure = error
                failure.pipelineIndex = index
                return ([], failure)
            }
        }
        guard unsafe PQenterPipelineMode(conn) == 1 else { return ([], connectionFailure()) }
        var results: [PGResult] = []
        var failure: PGFailure?
        do throws(PGFailure) {
            for (index, statement) in statements.enumerated() {
                try send(statement.sql, statement.parameters, name: names[index], binaryResults: true)
            }
            guard unsafe PQpipelineSync(conn) == 1 else { throw connectionFailure() }
            try readPipeline(expecting: statements.count, into: &results, deadline: deadline)
        } catch {
            failure = error
        }
        // libpq leaves pipeline mode only once every result is read. A connection still in it
        // (a send or the sync failed with statements queued, a wait failed, the connection was
        // lost or abandoned) would queue its next statement without a sync and wait for an answer
        // that never comes: it is abandoned, and the failure says the connection is broken.
        _ = unsafe PQexitPipelineMode(conn)
        let stuck = unsafe PQpipelineStatus(conn) != PQ_PIPELINE_OFF
        if stuck { abandonWithoutCancel() }
        guard var failure else {
            return stuck ? (results, connectionFailure()) : (results, nil)
        }
        failure.connectionBroken = failure.connectionBroken || stuck || isBroken
        if failure.sqlState == "26000" { forgetPreparedStatements() }
        return (results, failure)
    }

    /// Reads a synced pipeline's results up to its sync into `results`: one result per
    /// statement, each followed by libpq's end-of-statement nil, then the sync's. Throws the
    /// first failure once the sync is read (the results before it stay in `results`).
    private func readPipeline(
        expecting count: Int, into results: inout [PGResult], deadline: ContinuousClock.Instant
    ) throws(PGFailure) {
        roundTrips += 1
        try flush(deadline: deadline)
        var failure: PGFailure?
        var nilsInARow = 0
        while true {
            do {
                try waitWhileBusy(deadline: deadline)
            } catch {
                // A server failure already read says more than the wait's (a timeout, a lost
                // connection) that followed it; it keeps the wait's verdict on the connection.
                guard var first = failure else { throw error }
                first.connectionBroken = first.connectionBroken || error.connectionBroken
                first.timedOut = first.timedOut || error.timedOut
                throw first
            }
            guard let raw = unsafe PQgetResult(conn) else {
                // One nil ends a statement's results; two in a row mean nothing more is coming,
                // which only a lost connection does before the sync.
                nilsInARow += 1
                if nilsInARow > 1 || isBroken { throw failure ?? connectionFailure() }
                continue
            }
            nilsInARow = 0
            let result = unsafe PGResult(taking: raw)
            if result.isPipelineSync { break }
            if result.isPipelineAborted { continue }
            if var error = result.failure(broken: isBroken) {
                if failure == nil {
                    error.pipelineIndex = results.count
                    failure = error
                }
            } else if failure == nil {
                results.append(result)
            }
        }
        if let failure { throw failure }
        guard results.count == count else { throw connectionFailure() }
    }
}
