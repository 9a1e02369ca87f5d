import StrataStorage

extension SQLiteEngine {
    /// Checks the change set's result guards (``ChangeSet/resultGuards``) inside the write
    /// transaction open on `connection`, before any write: each guard's filter is run as a fetch
    /// runs it, by a reader on that connection, and its keys and versions compared with the
    /// expected ones. SQLite has one writer at a time (`BEGIN IMMEDIATE`), so nothing can change
    /// the set between this check and the commit.
    /// - Returns: the rows that appeared, vanished or changed, as conflicts (empty when every
    ///   guard holds).
    /// - Throws: `.misuse` for a guard of an unknown entity or column; SQLite's errors.
    static func checkResultGuards(
        _ changes: ChangeSet, laidOutBy layouts: some SQLiteLayoutSource, on connection: SQLiteConnection
    ) throws(StrataError) -> [VersionConflict] {
        guard !changes.resultGuards.isEmpty else { return [] }
        let reader = SQLiteReader(insideTransactionOf: layouts, connection: connection)
        defer { reader.close() }
        var conflicts: [VersionConflict] = []
        for guarded in changes.resultGuards {
            let table = try layouts.table(guarded.entity)
            do {
                conflicts += try guarded.check(
                    with: reader, storeIdentifier: layouts.storeIdentifier, entityName: table.entity.name)
            } catch let error as StrataError {
                throw error
            } catch {
                // The reader throws only StrataError; this keeps the typed signature honest.
                throw .io("checking a guarded fetch of \(table.entity.name) failed: \(error)")
            }
        }
        return conflicts
    }
}
