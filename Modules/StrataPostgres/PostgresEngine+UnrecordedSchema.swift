import StrataStorage

/// A store without a recorded schema (design notes §5): before the model's schema is recorded,
/// the tables the catalog holds are compared with the tables the model needs — every column's
/// name, type and nullability, in order — as SQLite compares its `CREATE` statements.
extension PostgresEngine {
    /// Throws `schemaMismatch` with an `unrecordedStoreDiffers` difference naming the first table
    /// and column that differ from the model's layout.
    static func checkUnrecordedTables(
        _ session: PostgresSession, schemaName: String, tables: [PostgresTableLayout], joins: [PostgresJoinLayout],
        storeVersion: Int, modelVersion: Int
    ) throws {
        let result = try session.run(
            """
            SELECT c.relname::text, a.attname::text, a.atttypid::int8, a.attnotnull::int4 \
            FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid \
            JOIN pg_namespace n ON n.oid = c.relnamespace \
            WHERE n.nspname = $1 AND c.relkind IN ('r', 'p') AND a.attnum > 0 AND NOT a.attisdropped \
            ORDER BY c.relname, a.attnum
            """, [.rawText(schemaName)], phase: .opening)
        var stored: [String: [StoredColumn]] = [:]
        for row in 0..<result.rowCount {
            guard let table = result.text(row, 0), let name = result.text(row, 1) else { continue }
            stored[table, default: []].append(
                StoredColumn(
                    name: name, typeOID: UInt32(truncatingIfNeeded: result.int64(row, 2) ?? 0),
                    notNull: result.int64(row, 3) == 1))
        }
        var expected: [(table: String, columns: [StoredColumn])] = []
        for table in tables {
            let columns =
                [
                    StoredColumn(name: "id", typeOID: PGParameter.int8OID, notNull: true),
                    StoredColumn(name: "version", typeOID: PGParameter.int8OID, notNull: true),
                ]
                + table.entity.columns.map { column in
                    StoredColumn(
                        name: column.name, typeOID: PostgresTableLayout.typeOID(column.type.storageClass),
                        notNull: !column.isOptional)
                }
            expected.append((table.entity.name, columns))
        }
        for join in joins {
            let columns = ["left", "right"].map { StoredColumn(name: $0, typeOID: PGParameter.int8OID, notNull: true) }
            expected.append((join.join.name, columns))
        }
        for (table, columns) in expected {
            if let difference = difference(table: table, stored: stored[table], expected: columns) {
                throw StrataError.schemaMismatch(
                    storeVersion: storeVersion, modelVersion: modelVersion,
                    differences: [.unrecordedStoreDiffers(difference)])
            }
        }
    }

    /// One column as the catalog describes it.
    struct StoredColumn: Equatable {
        var name: String
        var typeOID: UInt32
        var notNull: Bool

        var summary: String {
            let type =
                switch typeOID {
                case PGParameter.int8OID: "int8"
                case PGParameter.float8OID: "float8"
                case PGParameter.textOID: "text"
                case PGParameter.byteaOID: "bytea"
                default: "type \(typeOID)"
                }
            return "\(name) \(type)\(notNull ? " NOT NULL" : "")"
        }
    }

    /// What differs between a table in the catalog and the model's layout of it, nil when nothing.
    private static func difference(table: String, stored: [StoredColumn]?, expected: [StoredColumn]) -> String? {
        guard let stored else { return "the store has no table \(table)" }
        for (index, column) in expected.enumerated() {
            guard index < stored.count else {
                return "table \(table) has no column \(column.name) (the model needs \(column.summary))"
            }
            if stored[index] != column {
                return
                    "table \(table) column \(index + 1) is \(stored[index].summary); the model needs \(column.summary)"
            }
        }
        if stored.count > expected.count {
            return "table \(table) has column \(stored[expected.count].summary), which the model does not have"
        }
        return nil
    }
}
