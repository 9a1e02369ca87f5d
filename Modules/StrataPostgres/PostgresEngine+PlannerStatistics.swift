import StrataStorage
import Synchronization

/// Planner statistics that keep up with a growing table (issue 27).
///
/// Every statement with parameters is prepared once per connection, and after five runs
/// PostgreSQL may keep one generic plan for it for the connection's life. A plan made while a
/// table was nearly empty reads the whole table (a count of `date > $1` in a table of 20 rows is
/// cheapest that way), and it stays in use as the table grows, until an `ANALYZE` invalidates it.
/// Autovacuum analyses a table once it has changed enough, but only at its next round (a
/// minute apart by default, never when it is off). Measured on the ledger's transfers (workload 7
/// of `strata-bench`, a fresh store): its posting check, a count of the transactions dated after
/// now, read the whole table every time, from 0.03 ms at the start to 0.8 ms per count twenty
/// seconds later.
///
/// So the engine analyses a table (an entity's or a many-to-many join's) once its commits have
/// inserted as many rows into it as the table held at its last analysis, and at least
/// ``analyzeAfterRows``: a table without statistics after 1,000 rows, then at each doubling. What
/// the table held is the server's own count (`pg_class.reltuples`), read the first time the
/// engine's count reaches 1,000 and after each analysis, so an engine opened on a large table
/// does not analyse it after its first thousand rows. A handful of analyses over a table's
/// growth, each a few milliseconds with the table in cache (it samples 300 × the server's
/// `default_statistics_target` rows, 30,000 by default; 7 ms on a 1,000,000-row table), at most
/// 2 s (else cancelled), after the commit that crossed the line, before it returns. Under a role
/// that may not analyse the table (not its owner; on PostgreSQL 17 and later, without the
/// MAINTAIN privilege) the server skips the analysis with a warning (kept with the connection's
/// notices, not printed) and autovacuum's are the only ones.
extension PostgresEngine {
    /// The fewest rows a table gains through this engine's commits before it is analysed.
    static let analyzeAfterRows: Int64 = 1_000

    /// What the engine knows of one table's growth.
    struct TableGrowth {
        /// The rows the server counted in the table at its last analysis (nil until the engine
        /// has asked; 0 for a table never analysed).
        var rowsAtAnalysis: Int64?
        /// The rows this engine's commits have inserted since then.
        var inserted: Int64 = 0

        /// Whether the table is due for an analysis, or for the server's count when none is known.
        var isDue: Bool { inserted >= max(PostgresEngine.analyzeAfterRows, rowsAtAnalysis ?? 0) }
    }

    /// Counts the rows the committed `changes` inserted (`results`: its set writes' outcome) and
    /// analyses the tables whose growth passed the line, on `session`, after the commit.
    ///
    /// Best effort: a failure (a lock held by a schema change or another analysis, past 50 ms; an
    /// analysis past 2 s; a lost connection) is ignored, and the analysis is tried again after
    /// ``analyzeAfterRows`` more rows. Links count as offered (a link already stored is counted
    /// too, so a join table may be analysed a little early).
    func refreshPlannerStatistics(after changes: ChangeSet, results: [SetWriteResult], session: PostgresSession) {
        // Counted by number first: a batch insert of 1,000,000 rows passes here, and a table
        // name hashed per row would add a dictionary update per row to every commit.
        var entityRows = [Int64](repeating: 0, count: tables.count)
        var joinRows = [Int64](repeating: 0, count: joins.count)
        for row in changes.inserts where entityRows.indices.contains(row.entity) { entityRows[row.entity] += 1 }
        for (write, result) in zip(changes.setWrites, results) where entityRows.indices.contains(write.entity) {
            entityRows[write.entity] += Int64(result.insertedKeys.count)
        }
        for link in changes.links where joinRows.indices.contains(link.join) { joinRows[link.join] += 1 }
        let inserted =
            zip(tables.map(\.table), entityRows).filter { $0.1 > 0 }
            + zip(joins.map(\.table), joinRows).filter { $0.1 > 0 }
        guard !inserted.isEmpty else { return }
        let due = tableGrowth.withLock { growth in
            var due: [String] = []
            for (table, count) in inserted {
                growth[table, default: TableGrowth()].inserted += count
                if growth[table]?.isDue == true { due.append(table) }
            }
            return due
        }
        for table in due { refresh(table, session: session) }
    }

    /// Analyses `table` when the server's count says it grew enough (asking for that count first
    /// when the engine has none), and notes the count the analysis made.
    private func refresh(_ table: String, session: PostgresSession) {
        do throws(PGFailure) {
            let counted: Int64? =
                tableGrowth.withLock({ $0[table]?.rowsAtAnalysis }) == nil
                ? try rowsCounted(in: table, session: session) : nil
            // Claimed before the analysis runs, so a concurrent commit does not run another.
            let claimed = tableGrowth.withLock { growth -> Int64? in
                // A concurrent commit may have analysed it meanwhile: its count is newer.
                if let counted, growth[table]?.rowsAtAnalysis == nil { growth[table]?.rowsAtAnalysis = counted }
                guard let inserted = growth[table]?.inserted, growth[table]?.isDue == true else { return nil }
                growth[table]?.inserted = 0
                return inserted
            }
            guard let claimed else { return }
            do throws(PGFailure) {
                _ = try session.connection.executeScript(
                    "BEGIN; SET LOCAL lock_timeout = 50; SET LOCAL statement_timeout = 2000; ANALYZE \(table); COMMIT",
                    deadline: pool.statementDeadline)
            } catch {
                session.rollbackQuietly()
                // Tried again after analyzeAfterRows more rows.
                tableGrowth.withLock { growth in
                    let line = max(Self.analyzeAfterRows, growth[table]?.rowsAtAnalysis ?? 0)
                    growth[table]?.inserted += min(claimed, line - Self.analyzeAfterRows)
                }
                return
            }
            let rows = try rowsCounted(in: table, session: session)
            // The larger count is the newer one when two analyses' reads cross.
            tableGrowth.withLock { growth in
                let known = growth[table]?.rowsAtAnalysis ?? 0
                growth[table]?.rowsAtAnalysis = max(rows, known)
            }
        } catch {
            return
        }
    }

    /// The rows the server counted in `table` at its last analysis or vacuum (0 for none: -1 on
    /// PostgreSQL 14 and later, 0 before).
    private func rowsCounted(in table: String, session: PostgresSession) throws(PGFailure) -> Int64 {
        let result = try session.runRaw(
            "SELECT reltuples::int8 FROM pg_class WHERE oid = to_regclass($1)", [.rawText(table)])
        guard result.rowCount == 1, let rows = result.int64(0, 0) else { return 0 }
        return max(rows, 0)
    }
}
