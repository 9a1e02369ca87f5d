import StrataStorage

/// Result guards (``ChangeSet/resultGuards``) on PostgreSQL, where commits run concurrently.
///
/// A commit's version checks lock the rows it depends on (`FOR UPDATE`), but a guarded set may
/// gain a row that no lock covers: two commits that each re-run "admins of org 4", each find
/// none and each insert one would both pass under `READ COMMITTED`. So a change set with guards
/// and writes commits in a `SERIALIZABLE` transaction and re-runs each guarded query inside it,
/// before the version checks and writes, comparing keys and versions with the expected ones.
///
/// Why that is enough: the re-run sees every commit made before the transaction's snapshot, so a
/// change since the context's own snapshot is caught by the comparison. A commit that lands after
/// the snapshot is caught by the server's serializable snapshot isolation (SSI): the re-run takes
/// predicate locks on what it read, and two guarded transactions that each read a set the other
/// writes into form a cycle of read-write dependencies (each read "before" the other's write), so
/// the server aborts one of them with SQLSTATE 40001. That failure, and a deadlock (40P01), are
/// reported as `.conflict` (listing the rows that differ now), which
/// `ContextFactory.performUnitOfWork(retries:_:)` retries. Predicate locks are coarse (index pages,
/// or the whole table without an index): the server may abort a transaction whose set did not
/// really change, a false conflict that the retry absorbs. Only serializable transactions take
/// part in SSI: a writer that does not guard its own decision is not stopped by this one's guard.
///
/// A change set of guards (and verifies) alone writes nothing, so it needs no serializable
/// transaction: the re-run in `READ COMMITTED` sees the latest commits, and equal sets mean
/// nothing changed.
extension PostgresEngine {
    /// The statement that opens a commit's transaction: `SERIALIZABLE` for a change set with
    /// result guards and writes, the default (`READ COMMITTED`) otherwise.
    static func begin(for changes: ChangeSet) -> String {
        isSerializable(changes) ? "BEGIN ISOLATION LEVEL SERIALIZABLE" : "BEGIN"
    }

    /// Whether a commit of `changes` runs `SERIALIZABLE` (see the type's notes). Set writes count
    /// as writes, even in a change set with no row write.
    static func isSerializable(_ changes: ChangeSet) -> Bool {
        !changes.resultGuards.isEmpty && (changes.writesData || !changes.setWrites.isEmpty)
    }

    /// Re-runs every result guard in the transaction open on `session` (or in autocommit) and
    /// returns the rows that appeared, vanished or changed, as conflicts.
    /// - Throws: `.misuse` for a guard of an unknown entity or column; the server's errors.
    func checkResultGuards(_ changes: ChangeSet, session: PostgresSession) throws(StrataError) -> [VersionConflict] {
        guard !changes.resultGuards.isEmpty else { return [] }
        let reader = PostgresReader(insideTransactionOf: self, session: session)
        defer { reader.close() }
        var conflicts: [VersionConflict] = []
        for guarded in changes.resultGuards {
            let table = try table(guarded.entity)
            do {
                conflicts += try guarded.check(
                    with: reader, storeIdentifier: storeIdentifier, entityName: table.entity.name)
            } catch let error as StrataError {
                throw error
            } catch {
                // The reader throws only StrataError; this keeps the typed signature honest.
                throw .io("\(location): checking a guarded fetch of \(table.entity.name) failed: \(error)")
            }
        }
        return conflicts
    }

    /// Runs a commit, turning the server's serialization failure (40001) or deadlock (40P01) of
    /// a serializable commit into `.conflict` listing the rows that differ now (re-read after the
    /// rollback, ``rereadConflicts(_:session:)``).
    func reportingSerializationFailures<T>(
        _ changes: ChangeSet, _ body: () throws(StrataError) -> T
    ) throws(StrataError) -> T {
        guard Self.isSerializable(changes) else { return try body() }
        do {
            return try body()
        } catch {
            guard let state = error.native?.sqlState, state == "40001" || state == "40P01" else { throw error }
            throw try withSession { (session) throws(StrataError) in try rereadConflicts(changes, session: session) }
        }
    }
}
