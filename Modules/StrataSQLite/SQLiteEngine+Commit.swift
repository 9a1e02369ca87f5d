import Dispatch
import StrataStorage
import Synchronization

extension SQLiteEngine {
    func commit(_ changes: ChangeSet) throws {
        _ = try commitChanges(changes)
    }

    /// Commits `changes` in one `BEGIN IMMEDIATE … COMMIT`, its set writes after its row writes
    /// (``write(_:laidOutBy:into:schema:)``), and returns the set writes' results.
    ///
    /// Group commit: commits of this process that queue for the writer connection meanwhile are
    /// taken into the same transaction once its `BEGIN IMMEDIATE` holds the store's write lock,
    /// each inside a `SAVEPOINT` of its own, so that one `COMMIT` (one sync to disk) commits them
    /// all. Each stays all or nothing: one that fails is rolled back to its savepoint and gets its
    /// own error while the others commit; when the `COMMIT` fails, every one in it gets that error
    /// and none was written. A commit still queued when its busy timeout passes leaves the queue
    /// and throws `.busy` having written nothing.
    /// - Throws: `.misuse` for set writes that do not fit the schema (before writing anything);
    ///   `.storeNewerThanModel`; the errors of ``write(_:laidOutBy:into:schema:)``.
    func commitChanges(_ changes: ChangeSet) throws(StrataError) -> [SetWriteResult] {
        try changes.checkSetWrites(against: schema)
        if changes.isEmpty { return [] }
        let request = SQLiteCommitQueue.Request(changes)
        commitQueue.join(request)
        do {
            return try withWriter { (connection) throws(StrataError) in
                // An earlier holder of the connection may have committed this one already.
                if let result = request.result { return try result.get() }
                try connection.execute("BEGIN IMMEDIATE")
                let group = commitQueue.take(with: request)
                commitGroup(group, on: connection)
                return try request.result!.get()
            }
        } catch {
            // Not taken by any transaction: nothing was written, the error stands.
            if commitQueue.leave(request) { throw error }
            request.done.wait()
            return try request.result!.get()
        }
    }

    /// Writes each of `group` in the transaction begun on `connection`, each in a savepoint, then
    /// commits, and finishes every request with its result.
    private func commitGroup(_ group: [SQLiteCommitQueue.Request], on connection: SQLiteConnection) {
        do throws(StrataError) {
            try checkSchemaVersion(connection)
            try checkFileInPlace(connection)
        } catch {
            connection.rollbackQuietly()
            for request in group { request.finish(.failure(error)) }
            return
        }
        if group.count == 1, let only = group.first {
            do throws(StrataError) {
                let results = try Self.write(only.changes, laidOutBy: self, into: connection, schema: schema)
                try connection.execute("COMMIT")
                only.finish(.success(results))
            } catch {
                connection.rollbackQuietly()
                only.finish(.failure(error))
            }
            return
        }
        var written: [(SQLiteCommitQueue.Request, [SetWriteResult])] = []
        for request in group {
            do throws(StrataError) {
                try connection.execute("SAVEPOINT strata_commit")
                do throws(StrataError) {
                    let results = try Self.write(request.changes, laidOutBy: self, into: connection, schema: schema)
                    try connection.execute("RELEASE strata_commit")
                    written.append((request, results))
                } catch {
                    try connection.execute("ROLLBACK TO strata_commit")
                    try connection.execute("RELEASE strata_commit")
                    request.finish(.failure(error))
                }
            } catch {
                // The transaction itself failed: nothing of the group is written.
                connection.rollbackQuietly()
                for (done, _) in written { done.finish(.failure(error)) }
                for rest in group where rest.result == nil { rest.finish(.failure(error)) }
                return
            }
        }
        do throws(StrataError) {
            try connection.execute("COMMIT")
        } catch {
            connection.rollbackQuietly()
            for (request, _) in written { request.finish(.failure(error)) }
            return
        }
        groupedCommits.add(group.count, ordering: .relaxed)
        for (request, results) in written { request.finish(.success(results)) }
    }

    /// Throws `.storeNewerThanModel` when the store's schema version is no longer this engine's:
    /// another engine (this process or another, a newer version of the app) migrated the store
    /// since this one opened, and rows of this engine's layout must not be written into it, nor
    /// rows of the new layout read with it. One cached lookup in `strata_metadata`, inside the
    /// transaction open on `connection` (a commit's, a key reservation's, a reader's snapshot).
    func checkSchemaVersion(_ connection: SQLiteConnection) throws(StrataError) {
        let stored = try connection.queryInt64(
            "SELECT value FROM strata_metadata WHERE key = ?1",
            [
                .text("schema_version")
            ])
        if let stored, stored != Int64(schemaVersion) {
            throw .storeNewerThanModel(storeVersion: Int(clamping: stored), modelVersion: schemaVersion)
        }
    }

    /// Throws `.notAStore` when the store's file was deleted, or another file moved over it,
    /// since `connection` opened it: SQLite would commit into the open file, which no path names
    /// any more, and the commit would be lost while new processes open another store (or make an
    /// empty one). Inside the write transaction, before anything is written.
    func checkFileInPlace(_ connection: SQLiteConnection) throws(StrataError) {
        guard connection.fileHasMoved() else { return }
        throw .notAStore(
            path: path,
            reason: """
                it is no longer the store this container opened: the file was deleted or replaced by another \
                since, so a commit would go to a file no path names and be lost. Nothing was written. Open the \
                store again with a new container (restore the file from a backup if it was deleted by mistake)
                """)
    }

    /// Writes `changes` into the write transaction open on `connection`, with every check of a
    /// commit (result guards first, ``checkResultGuards(_:laidOutBy:on:)``), then runs its set
    /// writes (``SQLiteSetWriter``), and appends their ``ChangeSet/history`` when set and the
    /// change set writes data or its set writes changed rows
    /// (``ChangeSet/historyToAppend(adding:schema:)``, after every check passed) and moves its
    /// history cursors (`SQLiteEngine+Cursors.swift`); the caller commits, or rolls back when this
    /// throws.
    /// - Parameter schema: the schema `layouts` lay out, for the set writes' history; nil for a
    ///   caller that refuses set writes (a migration stage's engine).
    /// - Returns: one result per set write.
    /// - Throws: `.conflict` listing every version conflict; else the first unique clash
    ///   (`.constraintViolation`); `.misuse` for a change set that does not fit `layouts`; the set
    ///   writes' errors (``SQLiteSetWriter/run(_:)``); the history's errors
    ///   (``appendHistory(_:into:)``); SQLite's errors.
    @discardableResult
    static func write(
        _ changes: ChangeSet, laidOutBy layouts: some SQLiteLayoutSource, into connection: SQLiteConnection,
        schema: StoreSchema? = nil
    ) throws(StrataError) -> [SetWriteResult] {
        var writer = CommitWriter(engine: layouts, connection: connection)
        writer.conflicts = try checkResultGuards(changes, laidOutBy: layouts, on: connection)
        try writer.apply(changes)
        let cursorConflicts = try moveHistoryCursors(of: changes, store: layouts.storeIdentifier, in: connection)
        if !writer.conflicts.isEmpty || !cursorConflicts.isEmpty {
            throw StrataError.conflict(writer.conflicts + cursorConflicts)
        }
        if let violation = writer.violation { throw violation }
        guard !changes.setWrites.isEmpty else {
            if let history = changes.historyToAppend { try appendHistory(history, into: connection) }
            return []
        }
        guard let schema else { throw .misuse("set writes need the store schema; nothing was written") }
        let results = try SQLiteSetWriter(layouts: layouts, connection: connection).run(changes.setWrites)
        if let history = changes.historyToAppend(adding: results, schema: schema) {
            try appendHistory(history, into: connection)
        }
        return results
    }
}

/// Applies one change set inside an open write transaction, collecting version conflicts.
private struct CommitWriter<Layouts: SQLiteLayoutSource> {
    /// The engine whose layouts the change set is numbered by.
    let engine: Layouts
    let connection: SQLiteConnection
    var conflicts: [VersionConflict] = []
    /// The first uniqueness violation; reported when there are no conflicts.
    var violation: StrataError?

    init(engine: Layouts, connection: SQLiteConnection) {
        self.engine = engine
        self.connection = connection
    }

    mutating func apply(_ changes: ChangeSet) throws(StrataError) {
        for check in changes.verifies { try verify(check) }
        for delete in changes.deletes { try self.delete(delete) }
        for link in changes.unlinks {
            let statement = try unlinkStatement(link.join)
            try statement.bind(link.leftKey, at: 1)
            try statement.bind(link.rightKey, at: 2)
            try statement.run()
        }
        try write(changes.updates, isInsert: false)
        for touch in changes.touches {
            let table = try engine.table(touch.entity)
            let statement = try connection.statement(table.touch, slot: table.slotBase + SQLiteStatementSlot.touch)
            try statement.bind(touch.key, at: 1)
            try statement.bind(touch.expectedVersion, at: 2)
            try statement.run()
            if statement.changes != 1 { try recordConflict(table, key: touch.key, expected: touch.expectedVersion) }
        }
        try write(changes.inserts, isInsert: true)
        for link in changes.links {
            let statement = try linkStatement(link.join)
            try statement.bind(link.leftKey, at: 1)
            try statement.bind(link.rightKey, at: 2)
            try statement.run()
        }
    }

    /// Checks a row's version without writing it (``ChangeSet/verifies``).
    private mutating func verify(_ check: RowVersionCheck) throws(StrataError) {
        let table = try engine.table(check.entity)
        if try storedVersion(table, key: check.key) != check.expectedVersion {
            try recordConflict(table, key: check.key, expected: check.expectedVersion)
        }
    }

    private mutating func delete(_ delete: RowVersionCheck) throws(StrataError) {
        let table = try engine.table(delete.entity)
        let statement = try connection.statement(table.delete, slot: table.slotBase + SQLiteStatementSlot.delete)
        try statement.bind(delete.key, at: 1)
        try statement.bind(delete.expectedVersion, at: 2)
        try statement.run()
        guard statement.changes == 1 else {
            try recordConflict(table, key: delete.key, expected: delete.expectedVersion)
            return
        }
        for join in engine.joins {
            if join.join.leftEntity == delete.entity {
                let unlink = try connection.statement(
                    join.deleteLeft, slot: join.slotBase + SQLiteStatementSlot.deleteLeft)
                try unlink.bind(delete.key, at: 1)
                try unlink.run()
            }
            if join.join.rightEntity == delete.entity {
                let unlink = try connection.statement(
                    join.deleteRight, slot: join.slotBase + SQLiteStatementSlot.deleteRight)
                try unlink.bind(delete.key, at: 1)
                try unlink.run()
            }
        }
    }

    /// Inserts or updates rows, resolving each entity's table and statement once per run of
    /// rows of that entity.
    private mutating func write(_ rows: [RowWrite], isInsert: Bool) throws(StrataError) {
        var start = rows.startIndex
        while start < rows.endIndex {
            let number = rows[start].entity
            var end = start + 1
            while end < rows.endIndex, rows[end].entity == number { end += 1 }
            let table = try engine.table(number)
            let statement =
                try isInsert
                ? connection.statement(table.insert, slot: table.slotBase + SQLiteStatementSlot.insert)
                : connection.statement(table.update, slot: table.slotBase + SQLiteStatementSlot.update)
            // Updates that name their changed columns write only those (sparing the indexes of
            // the others); one statement per set of columns, kept while the set repeats.
            var masked: (columns: [Int], statement: SQLiteStatement)?
            for position in start..<end {
                let row = rows[position]
                if !isInsert, let changed = row.changedColumns, changed.count < table.storageClasses.count,
                    changed.allSatisfy({ $0 >= 0 && $0 < table.storageClasses.count })
                {
                    if masked?.columns != changed {
                        masked = (changed, try connection.statement(table.update(columns: changed)))
                    }
                    try write(row, table: table, statement: masked!.statement, isInsert: false, columns: changed)
                } else {
                    try write(row, table: table, statement: statement, isInsert: isInsert)
                }
            }
            start = end
        }
    }

    private mutating func write(
        _ row: RowWrite, table: SQLiteTableLayout, statement: SQLiteStatement, isInsert: Bool, columns: [Int]? = nil
    ) throws(StrataError) {
        if !isInsert && row.expectedVersion == .max {
            // No stored version can be incremented past Int64.max: this is a conflict unless the
            // row really holds that version, which only damage or a foreign writer makes.
            if try storedVersion(table, key: row.key) == .max {
                throw .storeFull(
                    """
                    \(table.entity.name) row \(row.key) has reached the highest version, \(Int64.max), and cannot \
                    be updated; copy its values into a new row
                    """
                )
            }
            try recordConflict(table, key: row.key, expected: row.expectedVersion)
            return
        }
        try bind(row, table: table, to: statement, isInsert: isInsert, columns: columns)
        do throws(StrataError) {
            // Every parameter is bound for every row.
            try statement.runRebinding()
        } catch .constraintViolation(_, _, let native) {
            // The extended code tells a primary-key clash (an insert of an existing row: a
            // conflict) from a unique-index clash, which the schema names.
            if native?.code != Int(SQLiteResultCode.constraintUnique) {
                try recordConflict(table, key: row.key, expected: row.expectedVersion)
            } else if violation == nil {
                let index = try connection.clashingUniqueIndex(of: table, for: row)
                let attributes = index?.columns.map { table.entity.columns[$0].name } ?? []
                violation = .constraintViolation(entity: table.entity.name, attributes: attributes, native: native)
            }
            return
        }
        if !isInsert && statement.changes != 1 {
            try recordConflict(table, key: row.key, expected: row.expectedVersion)
        }
    }

    private func bind(
        _ row: RowWrite, table: SQLiteTableLayout, to statement: SQLiteStatement, isInsert: Bool, columns: [Int]?
    ) throws(StrataError) {
        let classes = table.storageClasses
        guard row.values.count == classes.count else {
            throw .misuse(
                """
                \(table.entity.name) row \(row.key) has \(row.values.count) values; the entity has \
                \(classes.count) columns
                """
            )
        }
        guard row.key > 0 else { throw .misuse("\(table.entity.name) primary keys must be positive, got \(row.key)") }
        try statement.checkBound(statement.bindReturningCode(row.key, at: 1))
        try statement.checkBound(statement.bindReturningCode(isInsert ? 1 : row.expectedVersion + 1, at: 2))
        var index: Int32 = 3
        if let columns {
            for column in columns {
                try bindColumn(column, of: row, table: table, to: statement, at: index)
                index += 1
            }
        } else {
            for column in classes.indices {
                try bindColumn(column, of: row, table: table, to: statement, at: index)
                index += 1
            }
        }
        if !isInsert { try statement.checkBound(statement.bindReturningCode(row.expectedVersion, at: index)) }
    }

    @inline(__always)
    private func bindColumn(
        _ column: Int, of row: RowWrite, table: SQLiteTableLayout, to statement: SQLiteStatement, at index: Int32
    ) throws(StrataError) {
        let storageClass = table.storageClasses[column]
        let value = row.values[column]
        if storageClass.admits(value) {
            try statement.checkBound(statement.bindReturningCode(value, at: index))
        } else if storageClass == .real, case .integer(let integer) = value {
            try statement.checkBound(statement.bindReturningCode(.real(Double(integer)), at: index))
        } else {
            throw .misuse(
                """
                \(table.entity.name).\(table.entity.columns[column].name) stores \(storageClass.rawValue) \
                values, got \(value)
                """
            )
        }
    }

    private func linkStatement(_ number: Int) throws(StrataError) -> SQLiteStatement {
        let join = try engine.join(number)
        return try connection.statement(join.link, slot: join.slotBase + SQLiteStatementSlot.link)
    }

    private func unlinkStatement(_ number: Int) throws(StrataError) -> SQLiteStatement {
        let join = try engine.join(number)
        return try connection.statement(join.unlink, slot: join.slotBase + SQLiteStatementSlot.unlink)
    }

    private func storedVersion(_ table: SQLiteTableLayout, key: Int64) throws(StrataError) -> Int64? {
        let statement = try connection.statement(table.versionOf, slot: table.slotBase + SQLiteStatementSlot.versionOf)
        defer { statement.reset() }
        try statement.bind(key, at: 1)
        guard try statement.step() else { return nil }
        return statement.int64(at: 0)
    }

    /// Records a version mismatch, reading the stored version (nil when the row is missing).
    private mutating func recordConflict(_ table: SQLiteTableLayout, key: Int64, expected: Int64) throws(StrataError) {
        let stored = try storedVersion(table, key: key)
        guard key > 0 else { throw .misuse("\(table.entity.name) primary keys must be positive, got \(key)") }
        let id = ObjectID(storeIdentifier: engine.storeIdentifier, entityName: table.entity.name, primaryKey: key)
        conflicts.append(VersionConflict(objectID: id, expectedVersion: expected, storedVersion: stored))
    }
}
