import Foundation
import StrataStorage
import StrataTestSupport
import Testing

@testable import StrataPostgres

/// A stored text reads back as it was written, whatever lies where: the reader takes a text
/// straight from libpq's buffer only when every byte is ASCII above the escape bytes (checked
/// eight bytes a step, then byte by byte), and otherwise unescapes and validates it.
@Suite("PostgresEngine text reads")
struct PostgresTextReadTests {
    static let schema = StoreSchema(
        version: 1,
        entities: [
            EntitySchema(
                name: "Note", number: 0, columns: [ColumnSchema(name: "text", type: .string, isOptional: false)],
                indexes: [])
        ], joins: [])

    /// Texts of 0 to 25 bytes, plain, and with U+0000, U+0001, U+0002 (the first byte stored as
    /// it is), U+007F or "é" (two bytes) at every position: each special byte falls in the first
    /// word, a later word and the bytes after the last whole word.
    static let texts: [String] = {
        var texts: [String] = []
        for length in 0...25 {
            let plain = String(repeating: "a", count: length)
            texts.append(plain)
            for position in 0..<length {
                for special in ["\u{0}", "\u{1}", "\u{2}", "\u{7F}", "é"] {
                    var characters = Array(plain)
                    characters[position] = Character(special)
                    texts.append(String(characters))
                }
            }
        }
        return texts
    }()

    @Test("every text reads back unchanged")
    func roundTrip() async throws {
        let rows = try await PostgresEngineFixture.withEngine(Self.schema) { engine in
            var changes = ChangeSet()
            changes.inserts = Self.texts.enumerated().map { index, text in
                RowWrite(entity: 0, key: Int64(index + 1), expectedVersion: 0, values: [.text(text)])
            }
            try engine.commit(changes)
            let reader = try engine.makeReader()
            defer { reader.close() }
            return try reader.rows(for: FetchPlan(entity: 0))
        }
        #expect(rows.count == Self.texts.count)
        for row in rows {
            #expect(row.values == [.text(Self.texts[Int(row.key) - 1])], "row \(row.key)")
        }
    }
}
