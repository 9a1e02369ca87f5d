import StrataStorage

/// A set write's upsert: chunks of ``upsertChunk`` rows, each one
/// `INSERT … SELECT … FROM unnest($1 keys, $2 …) ON CONFLICT (<unique columns>) DO UPDATE SET
/// c = EXCLUDED.c, …, version = t.version + 1 WHERE (t.c IS DISTINCT FROM EXCLUDED.c OR …)
/// RETURNING id, version` (`DO NOTHING` to ignore clashes). A returned row at version 1 was
/// inserted, any other was updated, and a row not returned was ignored.
extension PostgresEngine {
    /// The rows one upsert statement sends.
    static let upsertChunk = 10_000

    /// Inserts or updates the upsert's rows; returns the updated keys, the inserted keys in row
    /// order and the ignored count.
    func runUpsert(
        _ upsert: SetWrite.Upsert, table: PostgresTableLayout, changes: ChangeSet, session: PostgresSession
    ) throws(StrataError) -> SetWriteResult {
        try checkUpsertRows(upsert, table: table)
        let sql = upsertSQL(upsert, table: table)
        var inserted = Set<Int64>()
        var updated: [Int64] = []
        var start = 0
        while start < upsert.rows.count {
            let end = min(start + Self.upsertChunk, upsert.rows.count)
            var keys = PGArrayEncoder(elementOID: PGParameter.int8OID, reservingElements: end - start)
            for key in upsert.keys[start..<end] { keys.append(.int8(key)) }
            var columns = table.storageClasses.map {
                PGArrayEncoder(elementOID: PostgresTableLayout.typeOID($0), reservingElements: end - start)
            }
            for row in upsert.rows[start..<end] {
                for (column, storageClass) in table.storageClasses.enumerated() {
                    columns[column].append(Self.parameter(row[column], storageClass: storageClass))
                }
            }
            let parameters = [keys.finish()] + columns.indices.map { columns[$0].finish() }
            let result = try runSetStatement(sql, parameters, table: table, changes: changes, session: session)
            for row in 0..<result.rowCount {
                guard let key = result.int64(row, 0), let version = result.int64(row, 1) else {
                    throw .storeCorrupt("\(location): a row of \(table.entity.name) has a NULL id or version")
                }
                if version == 1 { inserted.insert(key) } else { updated.append(key) }
            }
            start = end
        }
        let insertedKeys = inserted.isEmpty ? [] : upsert.keys.filter(inserted.contains)
        return SetWriteResult(
            keys: updated, insertedKeys: insertedKeys,
            ignoredCount: upsert.rows.count - insertedKeys.count - updated.count)
    }

    /// The statement of an upsert's chunk: keys in `$1`, one array per column after it.
    private func upsertSQL(_ upsert: SetWrite.Upsert, table: PostgresTableLayout) -> String {
        let names = table.entity.columns.map { pgQuoted($0.name) }
        let arrays =
            ["$1::int8[]"]
            + table.storageClasses.enumerated().map { "$\($0 + 2)::\(PostgresTableLayout.arrayType($1))" }
        let aliases = table.storageClasses.indices.map { ", c\($0)" }.joined()
        let target = upsert.uniqueColumns.map { names[$0] }.joined(separator: ", ")
        var onClash = "DO NOTHING"
        if case .update(let columns) = upsert.onClash, !columns.isEmpty {
            let sets = columns.map { "\(names[$0]) = EXCLUDED.\(names[$0])" } + [#""version" = t."version" + 1"#]
            let differs = columns.map { "t.\(names[$0]) IS DISTINCT FROM EXCLUDED.\(names[$0])" }
            onClash = """
                DO UPDATE SET \(sets.joined(separator: ", ")) WHERE \(differs.joined(separator: " OR "))
                """
        }
        return """
            INSERT INTO \(table.table) AS t (\(table.selectList)) SELECT k, 1\(aliases) \
            FROM unnest(\(arrays.joined(separator: ", "))) AS u(k\(aliases)) \
            ON CONFLICT (\(target)) \(onClash) RETURNING t."id", t."version"
            """
    }

    /// Refuses an upsert row the table cannot hold (a key that is not positive, a value of another
    /// storage class), before anything is sent.
    private func checkUpsertRows(_ upsert: SetWrite.Upsert, table: PostgresTableLayout) throws(StrataError) {
        for (index, row) in upsert.rows.enumerated() {
            guard upsert.keys[index] > 0 else {
                throw .misuse("\(table.entity.name) primary keys must be positive, got \(upsert.keys[index])")
            }
            for (column, storageClass) in table.storageClasses.enumerated() {
                let value = row[column]
                if storageClass.admits(value) { continue }
                if storageClass == .real, case .integer = value { continue }
                throw .misuse(
                    """
                    upsert row \(index): \(table.entity.name).\(table.entity.columns[column].name) stores \
                    \(storageClass.rawValue) values, got \(value)
                    """)
            }
        }
    }
}
