import Foundation
import StrataStorage
import StrataTestSupport
import Testing

@testable import StrataPostgres

/// A commit's inserts go in batches (`INSERT … SELECT … FROM unnest(…)`, ``PostgresEngine/insertBatchSize``
/// rows each): every value, NULLs included, round-trips; a taken key or a unique clash in any
/// batch fails the whole commit with the same typed error as a single insert, and writes nothing.
@Suite("PostgresEngine batched inserts")
struct PostgresBatchInsertTests {
    static let schema = StoreSchema(
        version: 1,
        entities: [
            EntitySchema(
                name: "Entry", number: 0,
                columns: [
                    ColumnSchema(name: "code", type: .string, isOptional: false),
                    ColumnSchema(name: "amount", type: .double, isOptional: true),
                    ColumnSchema(name: "count", type: .int64, isOptional: true),
                    ColumnSchema(name: "data", type: .data, isOptional: true),
                    ColumnSchema(name: "note", type: .string, isOptional: true),
                ],
                indexes: [IndexSchema(name: "Entry_code", columns: [0], isUnique: true)]),
            EntitySchema(
                name: "Tag", number: 1, columns: [ColumnSchema(name: "name", type: .string, isOptional: false)],
                indexes: []),
        ], joins: [])

    /// More rows than two batches hold, so the last batch is a partial one.
    static let rowCount = PostgresEngine.insertBatchSize * 2 + 7

    static func entry(_ key: Int64, code: String? = nil) -> RowWrite {
        let values: ContiguousArray<StoredValue> =
            key % 3 == 0
            ? [.text(code ?? "c\(key)"), .null, .null, .null, .null]
            : [
                .text(code ?? "c\(key)"), key % 2 == 0 ? .integer(key) : .real(Double(key) / 4), .integer(-key),
                .blob(Data([0, UInt8(truncatingIfNeeded: key), 0xff])), .text("n\u{0}\\\(key) é"),
            ]
        return RowWrite(entity: 0, key: key, expectedVersion: 0, values: values)
    }

    /// Opens a fresh store, runs `body` off the cooperative pool, closes it.
    static func withEngine<T: Sendable>(_ body: @escaping @Sendable (PostgresEngine) throws -> T) async throws -> T {
        try await PostgresEngineFixture.withEngine(schema, body)
    }

    static func allRows(_ engine: PostgresEngine, entity: Int) throws -> [StoredRow] {
        let reader = try engine.makeReader()
        defer { reader.close() }
        return try reader.rows(for: FetchPlan(entity: entity))
    }

    @Test("rows of two entities across several batches round-trip, NULLs, NUL, backslash and bytes included")
    func roundTrip() async throws {
        let (rows, tags) = try await Self.withEngine { engine in
            var changes = ChangeSet()
            changes.inserts = (1...Int64(Self.rowCount)).map { Self.entry($0) }
            changes.inserts.append(RowWrite(entity: 1, key: 5, expectedVersion: 0, values: [.text("five")]))
            try engine.commit(changes)
            return (try Self.allRows(engine, entity: 0), try Self.allRows(engine, entity: 1))
        }
        #expect(rows.count == Self.rowCount)
        for row in rows {
            let expected = Self.entry(row.key).values.map { value -> StoredValue in
                // An integer bound to a real column is stored as a real.
                if case .integer(let v) = value, value == Self.entry(row.key).values[1] { return .real(Double(v)) }
                return value
            }
            #expect(row.version == 1)
            #expect(Array(row.values) == expected, "row \(row.key)")
        }
        #expect(tags.map(\.values) == [[.text("five")]])
    }

    @Test("a key already stored, in the last batch: .conflict naming it, and nothing of the commit is written")
    func takenKeyInALaterBatch() async throws {
        let (error, count) = try await Self.withEngine { engine in
            var first = ChangeSet()
            first.inserts = [Self.entry(Int64(Self.rowCount))]
            try engine.commit(first)
            var changes = ChangeSet()
            changes.inserts = (1...Int64(Self.rowCount)).map { Self.entry($0, code: "other\($0)") }
            var error: StrataError?
            do { try engine.commit(changes) } catch let caught as StrataError { error = caught }
            return (error, try Self.allRows(engine, entity: 0).count)
        }
        guard case .conflict(let conflicts)? = error else {
            Issue.record("expected .conflict, got \(String(describing: error))")
            return
        }
        #expect(conflicts.map(\.objectID.primaryKey) == [Int64(Self.rowCount)])
        #expect(conflicts.first?.storedVersion == 1)
        #expect(count == 1)
    }

    @Test("a unique value taken in the second batch: .constraintViolation on code (23505), nothing written")
    func uniqueClashInALaterBatch() async throws {
        let (error, count) = try await Self.withEngine { engine in
            var changes = ChangeSet()
            changes.inserts = (1...Int64(Self.rowCount)).map { Self.entry($0) }
            let clash = PostgresEngine.insertBatchSize + 3
            changes.inserts[clash] = Self.entry(Int64(clash + 1), code: "c1")
            var error: StrataError?
            do { try engine.commit(changes) } catch let caught as StrataError { error = caught }
            return (error, try Self.allRows(engine, entity: 0).count)
        }
        guard case .constraintViolation(let entity, let attributes, let native)? = error else {
            Issue.record("expected .constraintViolation, got \(String(describing: error))")
            return
        }
        #expect(entity == "Entry")
        #expect(attributes == ["code"])
        #expect(native?.sqlState == "23505")
        #expect(count == 0)
    }
}
