import StrataStorage

/// A set write's delete and deny.
///
/// A delete is one `DELETE … WHERE (<selection>) RETURNING id, <tombstone columns>`, then, as for
/// row deletes, the join rows naming the deleted keys. A deny writes nothing: one `SELECT` groups
/// the selected rows by the key they refer to, and any row fails the commit.
extension PostgresEngine {
    /// Deletes the rows `selection` picks, with their join rows; returns their keys and tombstones.
    func runDelete(
        _ tombstoneColumns: [Int], selection: PostgresSetSelection, table: PostgresTableLayout, changes: ChangeSet,
        session: PostgresSession
    ) throws(StrataError) -> SetWriteResult {
        let returned = ([#""id""#] + tombstoneColumns.map { pgQuoted(table.entity.columns[$0].name) })
            .joined(separator: ", ")
        let result = try runSetStatement(
            "DELETE FROM \(table.table) WHERE \(selection.sql) RETURNING \(returned)", selection.parameters,
            table: table, changes: changes, session: session)
        let keys = try returnedKeys(result, table: table)
        var tombstones: [[StoredValue]] = []
        if !tombstoneColumns.isEmpty {
            tombstones.reserveCapacity(keys.count)
            for (row, key) in keys.enumerated() {
                var values: [StoredValue] = []
                values.reserveCapacity(tombstoneColumns.count)
                for (position, column) in tombstoneColumns.enumerated() {
                    guard let value = result.storedValue(row, position + 1, table.storageClasses[column]) else {
                        throw .storeCorrupt(
                            """
                            \(location): \(table.entity.name).\(table.entity.columns[column].name) of row \(key) does \
                            not decode as its type
                            """)
                    }
                    values.append(value)
                }
                tombstones.append(values)
            }
        }
        if !keys.isEmpty {
            let entity = table.entity.number
            for join in joins where join.join.leftEntity == entity || join.join.rightEntity == entity {
                let deleted = [Self.int8Array(keys)]
                if join.join.leftEntity == entity {
                    _ = try runSetStatement(join.deleteLefts, deleted, table: table, changes: changes, session: session)
                }
                if join.join.rightEntity == entity {
                    _ = try runSetStatement(
                        join.deleteRights, deleted, table: table, changes: changes, session: session)
                }
            }
        }
        return SetWriteResult(keys: keys, tombstones: tombstones)
    }

    /// Fails with the denial when `selection` picks any row: the holders are the keys the rows
    /// refer to (their own keys for a selection by filter), with how many rows there are.
    func runDeny(
        _ denial: SetWrite.DeleteDenial, write: SetWrite, selection: PostgresSetSelection,
        table: PostgresTableLayout, session: PostgresSession
    ) throws(StrataError) {
        let holder: String
        if case .referencing(let column, _) = write.selection {
            holder = pgQuoted(table.entity.columns[column].name)
        } else {
            holder = #""id""#
        }
        let result = try session.run(
            """
            SELECT \(holder), count(*) FROM \(table.table) WHERE \(selection.sql) GROUP BY \(holder) \
            ORDER BY \(holder)
            """, selection.parameters)
        guard result.rowCount > 0 else { return }
        var holders: [Int64] = []
        var related = 0
        for row in 0..<result.rowCount {
            if let key = result.int64(row, 0) { holders.append(key) }
            related += Int(result.int64(row, 1) ?? 0)
        }
        throw denial.error(holders: holders, relatedCount: related, storeIdentifier: storeIdentifier)
    }
}

extension PGResult {
    /// The value of a cell as a stored value of `storageClass` (binary results); nil when it does
    /// not decode as one.
    func storedValue(_ row: Int, _ column: Int, _ storageClass: StorageClass) -> StoredValue? {
        if isNull(row, column) { return .null }
        switch storageClass {
        case .integer: return int64(row, column).map(StoredValue.integer)
        case .real: return double(row, column).map(StoredValue.real)
        case .text: return text(row, column).map(StoredValue.text)
        case .blob: return data(row, column).map(StoredValue.blob)
        }
    }
}
