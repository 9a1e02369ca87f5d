import Foundation
import StrataStorage
import StrataTestSupport
import Testing

@testable import StrataPostgres

/// How the PostgreSQL reader decodes result rows: many rows read through one reused row keep
/// their own values (ASCII, escaped and non-ASCII texts, NULLs), and a row changed by hand so that
/// it no longer fits the model is `.storeCorrupt` naming the row and column, never a wrong value.
@Suite("PostgresEngine row decoding")
struct PostgresRowDecodingTests {
    static let schema = StoreSchema(
        version: 1,
        entities: [
            EntitySchema(
                name: "Item", number: 0,
                columns: [
                    ColumnSchema(name: "name", type: .string, isOptional: false),
                    ColumnSchema(name: "note", type: .string, isOptional: true),
                    ColumnSchema(name: "done", type: .bool, isOptional: false),
                    ColumnSchema(name: "weight", type: .double, isOptional: true),
                ],
                indexes: [])
        ], joins: [])

    /// Texts of every kind the reader tells apart: plain ASCII, empty, with the escape's bytes,
    /// with bytes past ASCII, and the control byte just above the escaped ones.
    static let names = ["plain", "", "nul\u{0}inside", "one\u{1}two", "émile", "😀", "\u{2}low", "tab\there"]

    static func item(_ key: Int64) -> RowWrite {
        let name = names[Int(key) % names.count]
        let values: ContiguousArray<StoredValue> = [
            .text(name + "#\(key)"), key % 3 == 0 ? .null : .text("note \(key) é"), .integer(key % 2),
            key % 4 == 0 ? .null : .real(Double(key) / 8),
        ]
        return RowWrite(entity: 0, key: key, expectedVersion: 0, values: values)
    }

    static func rows(_ engine: PostgresEngine) throws -> [StoredRow] {
        let reader = try engine.makeReader()
        defer { reader.close() }
        return try reader.rows(for: FetchPlan(entity: 0))
    }

    /// Runs `sql` on the store's table (`ITEMS` stands for its quoted name).
    static func alter(_ engine: PostgresEngine, _ sql: String) throws {
        let table = try engine.table(0).table
        try engine.withSession { (session) throws(StrataError) in
            _ = try session.run(sql.replacingOccurrences(of: "ITEMS", with: table))
        }
    }

    @Test("rows read one after another through one row keep their own values, texts and NULLs")
    func manyRows() async throws {
        let rows = try await PostgresEngineFixture.withEngine(Self.schema) { engine in
            var changes = ChangeSet()
            changes.inserts = (1...40).map { Self.item($0) }
            try engine.commit(changes)
            return try Self.rows(engine)
        }
        #expect(rows.map(\.key) == Array(1...40))
        for row in rows { #expect(row.values == Self.item(row.key).values, "row \(row.key)") }
    }

    @Test("a NULL written by hand into a required column is .storeCorrupt naming the row and column")
    func nullInRequiredColumn() async throws {
        let error = try await PostgresEngineFixture.withEngine(Self.schema) { engine in
            var changes = ChangeSet()
            changes.inserts = (1...3).map { Self.item($0) }
            try engine.commit(changes)
            try Self.alter(engine, "ALTER TABLE ITEMS ALTER COLUMN \"name\" DROP NOT NULL")
            try Self.alter(engine, "UPDATE ITEMS SET \"name\" = NULL WHERE id = 2")
            return #expect(throws: StrataError.self) { try Self.rows(engine) }
        }
        guard case .storeCorrupt(let message, _) = error else {
            Issue.record("expected .storeCorrupt, got \(String(describing: error))")
            return
        }
        #expect(message.contains("Item.name of row 2 is NULL in a required column"), "\(message)")
    }

    @Test("a Bool column holding 2 is .storeCorrupt; a NULL in an optional column reads as nil")
    func boolOutOfRange() async throws {
        let (error, rows) = try await PostgresEngineFixture.withEngine(Self.schema) { engine in
            var changes = ChangeSet()
            changes.inserts = (1...4).map { Self.item($0) }
            try engine.commit(changes)
            try Self.alter(engine, "UPDATE ITEMS SET \"weight\" = NULL, \"note\" = NULL WHERE id = 1")
            let rows = try Self.rows(engine)
            try Self.alter(engine, "UPDATE ITEMS SET \"done\" = 2 WHERE id = 3")
            return (#expect(throws: StrataError.self) { try Self.rows(engine) }, rows)
        }
        #expect(rows.first?.values == [Self.item(1).values[0], .null, .integer(1), .null])
        guard case .storeCorrupt(let message, _) = error else {
            Issue.record("expected .storeCorrupt, got \(String(describing: error))")
            return
        }
        #expect(message.contains("Item.done of row 3 holds 2, but a Bool column holds only 0 or 1"), "\(message)")
    }
}
