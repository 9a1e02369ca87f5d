import StrataStorage

/// Commits (design notes §7): one `READ COMMITTED` transaction on a short lease (`SERIALIZABLE`
/// when the change set has result guards and writes, see `PostgresEngine+Guards.swift`). Every
/// row the change set depends on is locked (`FOR UPDATE`, entities in number order, keys
/// ascending) and its version compared first, so a conflict lists every stale row and nothing is
/// written; then the writes, and last the history append, the commit's identity and `COMMIT` in
/// one round trip, so that a lost reply is settled instead of guessed
/// (``commitIdentified(_:appending:)``). Set writes run after the row writes, before the history
/// append (`PostgresEngine+SetWrites.swift`). A commit that doubled a table then analyses it
/// (`PostgresEngine+PlannerStatistics.swift`).
extension PostgresEngine {
    func commit(_ changes: ChangeSet) throws {
        _ = try commitReturningResults(changes)
    }

    /// Bounds how long the commit's transaction may wait idle on the server: the engine drives it
    /// without pause, so it is idle that long only when this process lost its connection (a
    /// partition, a half-open flow after a lost reply to `COMMIT`, a stopped process). The server
    /// then ends the session and frees its row locks, instead of holding them until TCP gives up
    /// (hours), which made every later commit on those rows fail with a lock timeout. The bound is
    /// the statement timeout and 5 s, longer than any pause of the engine between two statements.
    var orphanBound: String {
        let statement = PostgresConnectionSettings.milliseconds(pool.options.boundedTimeouts.statementTimeout)
        let milliseconds = min(statement + 5_000, PostgresConnectionSettings.largestMilliseconds)
        return "SET LOCAL idle_in_transaction_session_timeout = \(milliseconds)"
    }

    /// The transaction of ``commit(_:)`` (`SERIALIZABLE` for result guards: `PostgresEngine+Guards.swift`):
    /// the set writes' results once it committed.
    func commitTransaction(_ changes: ChangeSet) throws(StrataError) -> [SetWriteResult] {
        try withSession { (session) throws(StrataError) -> [SetWriteResult] in
            try beginCheckingSchemaVersion(session, Self.begin(for: changes) + "; " + orphanBound)
            let written: (results: [SetWriteResult], history: HistoryRecord?)
            do throws(StrataError) {
                written = try writeLeavingHistory(changes, session: session, insertKeysReread: true)
            } catch {
                session.rollbackQuietly()
                if case .conflict(let conflicts) = error, conflicts.isEmpty {
                    throw try rereadConflicts(changes, session: session)
                }
                // A taken key is a conflict first, as on the embedded engines, which compare
                // versions before any write; here a unique index can fail before the primary key.
                if case .constraintViolation = error {
                    let taken = try takenInsertKeys(changes, session: session)
                    if !taken.isEmpty { throw .conflict(taken) }
                }
                throw error
            }
            try commitIdentified(session, appending: written.history)
            refreshPlannerStatistics(after: changes, results: written.results, session: session)
            return written.results
        }
    }

    /// The conflict of a commit that lost a race the row locks could not prevent (a deadlock, a
    /// key inserted concurrently), read after the rollback in autocommit: the rows whose version
    /// is no longer the expected one, or, when none differs now, every row the change set writes
    /// with its current version, so the list is never empty.
    func rereadConflicts(_ changes: ChangeSet, session: PostgresSession) throws(StrataError) -> StrataError {
        let guarded = try checkResultGuards(changes, session: session)
        var involved: [(entity: Int, key: Int64, expected: Int64, isInsert: Bool)] = []
        for check in changes.verifies + changes.deletes + changes.touches {
            involved.append((check.entity, check.key, check.expectedVersion, false))
        }
        for row in changes.updates { involved.append((row.entity, row.key, row.expectedVersion, false)) }
        for row in changes.inserts { involved.append((row.entity, row.key, row.expectedVersion, true)) }
        var involvedKeys: [Int: [Int64]] = [:]
        for row in involved { involvedKeys[row.entity, default: []].append(row.key) }
        let current = try storedVersions(involvedKeys, \.versionsOf, session: session)
        func conflict(_ row: (entity: Int, key: Int64, expected: Int64, isInsert: Bool)) -> VersionConflict {
            versionConflict(row.entity, row.key, expected: row.expected, stored: current[row.entity]?[row.key])
        }
        let stale = involved.filter { row in
            let version = current[row.entity]?[row.key]
            return row.isInsert ? version != nil : version != row.expected
        }
        guard !involved.isEmpty || !guarded.isEmpty else {
            return .busy(
                """
                \(location): a concurrent commit of the same rows or links won a race (a deadlock or a key taken \
                meanwhile); nothing was written. Retry the save
                """)
        }
        if !guarded.isEmpty && stale.isEmpty { return .conflict(guarded) }
        return .conflict(guarded + (stale.isEmpty ? involved : stale).map(conflict))
    }

    /// Refuses a change set that does not fit the schema, before anything is sent.
    func checkShape(_ changes: ChangeSet) throws(StrataError) {
        for row in changes.inserts + changes.updates {
            let table = try table(row.entity)
            guard row.key > 0 else {
                throw .misuse("\(table.entity.name) primary keys must be positive, got \(row.key)")
            }
            guard row.values.count == table.storageClasses.count else {
                throw .misuse(
                    """
                    \(table.entity.name) row \(row.key) has \(row.values.count) values; the entity has \
                    \(table.storageClasses.count) columns
                    """
                )
            }
            for (column, storageClass) in table.storageClasses.enumerated() {
                let value = row.values[column]
                if storageClass.admits(value) { continue }
                if storageClass == .real, case .integer = value { continue }
                throw .misuse(
                    """
                    \(table.entity.name).\(table.entity.columns[column].name) stores \(storageClass.rawValue) \
                    values, got \(value)
                    """
                )
            }
        }
        for check in changes.verifies + changes.deletes + changes.touches {
            let table = try table(check.entity)
            guard check.key > 0 else {
                throw .misuse("\(table.entity.name) primary keys must be positive, got \(check.key)")
            }
        }
        for link in changes.links + changes.unlinks { _ = try join(link.join) }
    }

    /// Writes `changes` into the transaction open on `session`, with every check of a commit, and
    /// returns the results of its set writes.
    ///
    /// `insertKeysReread`: the caller lists the conflicts of a failed insert after rolling back
    /// (``rereadConflicts(_:session:)``), so insert keys need no look-up while nothing else
    /// conflicts.
    @discardableResult
    func write(
        _ changes: ChangeSet, session: PostgresSession, insertKeysReread: Bool
    ) throws(StrataError) -> [SetWriteResult] {
        let written = try writeLeavingHistory(changes, session: session, insertKeysReread: insertKeysReread)
        if let history = written.history { try appendHistory(history, session: session) }
        return written.results
    }

    /// ``write(_:session:insertKeysReread:)`` but the history append: returns the record to
    /// append (nil when the change set records none), for a commit that sends it in the round trip
    /// of its `COMMIT`, so the history clock's row lock, which every commit with history takes, is
    /// held only while the server runs the last three statements (``commitIdentified(_:appending:)``).
    func writeLeavingHistory(
        _ changes: ChangeSet, session: PostgresSession, insertKeysReread: Bool
    ) throws(StrataError) -> (results: [SetWriteResult], history: HistoryRecord?) {
        // 0. Re-run the guarded fetches (PostgresEngine+Guards.swift).
        let guarded = try checkResultGuards(changes, session: session)
        // 1. Lock and read every checked row.
        var checkedKeys: [Int: Set<Int64>] = [:]
        for check in changes.verifies + changes.deletes + changes.touches {
            checkedKeys[check.entity, default: []].insert(check.key)
        }
        for row in changes.updates { checkedKeys[row.entity, default: []].insert(row.key) }
        let stored = try storedVersions(checkedKeys.mapValues { $0.sorted() }, \.lockVersions, session: session)
        // 2. Compare.
        var conflicts = guarded
        func conflict(_ entity: Int, _ key: Int64, expected: Int64, stored version: Int64?) {
            conflicts.append(versionConflict(entity, key, expected: expected, stored: version))
        }
        for check in changes.verifies + changes.deletes {
            let version = stored[check.entity]?[check.key]
            if version != check.expectedVersion {
                conflict(check.entity, check.key, expected: check.expectedVersion, stored: version)
            }
        }
        func checkIncrement(_ entity: Int, _ key: Int64, _ expected: Int64) throws(StrataError) {
            let version = stored[entity]?[key]
            if expected == .max && version == .max {
                throw .storeFull(
                    """
                    \(tables[entity].entity.name) row \(key) has reached the highest version, \(Int64.max), and cannot \
                    be \
                    updated; copy its values into a new row
                    """)
            }
            if version != expected || expected == .max { conflict(entity, key, expected: expected, stored: version) }
        }
        for row in changes.updates { try checkIncrement(row.entity, row.key, row.expectedVersion) }
        for touch in changes.touches { try checkIncrement(touch.entity, touch.key, touch.expectedVersion) }
        conflicts += try moveHistoryCursors(of: changes, session: session)
        // Insert keys come from the store's reservation, so a stored one means a lost race or a
        // key misused: the INSERT's primary key refuses it, and the conflict is listed after the
        // rollback (`translate`, then `rereadConflicts`; after a unique clash, `takenInsertKeys`
        // in `commitTransaction`). A look-up of every key here cost a batch insert a SELECT of
        // all its keys; it runs only to complete a conflict list that already has entries, or
        // where no re-read follows (`insertKeysReread` false: a migration stage's savepoint).
        if !conflicts.isEmpty || !insertKeysReread { conflicts += try takenInsertKeys(changes, session: session) }
        if !conflicts.isEmpty { throw .conflict(conflicts) }
        // 3. Write, several statements a round trip.
        do throws(PGFailure) {
            try run(writePlan(for: changes), session: session)
        } catch {
            throw try translate(error, changes: changes, session: session)
        }
        // 4. Set writes, in order, each seeing what the earlier writes left; the history record
        // lists their rows too.
        let results = try runSetWrites(changes, session: session)
        return (results, changes.historyToAppend(adding: results, schema: schema))
    }

    /// The inserts of `changes` whose key is already stored, as conflicts with the stored version.
    func takenInsertKeys(_ changes: ChangeSet, session: PostgresSession) throws(StrataError) -> [VersionConflict] {
        var insertKeys: [Int: [Int64]] = [:]
        for row in changes.inserts { insertKeys[row.entity, default: []].append(row.key) }
        let stored = try storedVersions(insertKeys, \.versionsOf, session: session)
        guard !stored.isEmpty else { return [] }
        return changes.inserts.compactMap { row in
            guard let version = stored[row.entity]?[row.key] else { return nil }
            return versionConflict(row.entity, row.key, expected: row.expectedVersion, stored: version)
        }
    }

    /// The stored version of each row among `keys` (entity → keys), read with `statement`
    /// (``PostgresTableLayout/versionsOf``, or ``PostgresTableLayout/lockVersions``, which locks
    /// the rows too), entity by entity in number order. Keys without a row are absent.
    private func storedVersions(
        _ keys: [Int: [Int64]], _ statement: KeyPath<PostgresTableLayout, String>, session: PostgresSession
    ) throws(StrataError) -> [Int: [Int64: Int64]] {
        var stored: [Int: [Int64: Int64]] = [:]
        for entity in keys.keys.sorted() {
            let result = try session.run(try table(entity)[keyPath: statement], [.int8Array(keys[entity, default: []])])
            for row in 0..<result.rowCount {
                if let key = result.int64(row, 0), let version = result.int64(row, 1) {
                    stored[entity, default: [:]][key] = version
                }
            }
        }
        return stored
    }

    /// The conflict of row `key` of `entity`, expected at version `expected`, stored at `stored`
    /// (nil: no row).
    private func versionConflict(_ entity: Int, _ key: Int64, expected: Int64, stored: Int64?) -> VersionConflict {
        let id = ObjectID(storeIdentifier: storeIdentifier, entityName: tables[entity].entity.name, primaryKey: key)
        return VersionConflict(objectID: id, expectedVersion: expected, storedVersion: stored)
    }

    /// A write's failure: a unique clash names its index; a deadlock lists the rows involved.
    func translate(
        _ failure: PGFailure, changes: ChangeSet, session: PostgresSession
    ) throws(StrataError) -> StrataError {
        let native = PostgresError.native(failure, sql: nil, operation: "committing", redacting: pool.settings.secret)
        if failure.sqlState == "23505", let constraint = failure.constraint {
            for table in tables {
                if constraint == PostgresDerivedName.primaryKey(of: table.entity.name) { break }
                if let index = table.entity.indexes.first(where: { $0.name == constraint }) {
                    return .constraintViolation(
                        entity: table.entity.name, attributes: index.columns.map { table.entity.columns[$0].name },
                        native: native)
                }
            }
        }
        if failure.sqlState == "54000", let issue = indexEntryTooLong(failure) { return .validation([issue]) }
        if failure.sqlState == "23505" || failure.sqlState == "40P01" || failure.sqlState == "40001" {
            // A concurrent transaction wrote the same rows (a deadlock), or an insert key is taken
            // (insert keys are not looked up first). The rows are listed once the transaction is
            // rolled back (``rereadConflicts(_:session:)``): an empty list marks it.
            return .conflict([])
        }
        return session.error(failure, sql: nil)
    }

    /// A value too long for a B-tree index (SQLSTATE 54000, "index row size … exceeds … maximum
    /// … for index "NAME""): the issue names the index's entity and attributes, as LMDB's
    /// key-size check does. The server sets no field with the index, so its quoted name is
    /// looked up in the message among the store's own indexes.
    private func indexEntryTooLong(_ failure: PGFailure) -> ValidationIssue? {
        guard failure.message.hasPrefix("index row") else { return nil }
        for table in tables {
            for index in table.entity.indexes where failure.message.hasSuffix("for index \"\(index.name)\"") {
                return ValidationIssue(
                    entity: table.entity.name,
                    property: index.columns.map { table.entity.columns[$0].name }.joined(separator: ", "),
                    message: """
                        the value is too long to index: \(failure.message) (a PostgreSQL B-tree entry holds about \
                        2,700 bytes, after compression); nothing was written. Shorten the value or drop the index
                        """)
            }
        }
        return nil
    }
}
