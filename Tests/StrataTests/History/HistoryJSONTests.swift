import Foundation
import StrataStorage
import Testing

/// The engines write history as JSON by hand (``HistoryJSON``, for speed): it must read back
/// with `JSONDecoder` as exactly what was written, whatever the strings hold, and stay the JSON
/// `JSONEncoder` writes.
@Suite("history JSON")
struct HistoryJSONTests {
    /// Strings that need escaping, and some that do not.
    static let awkward = [
        "plain", "quote \" and backslash \\", "new\nline\ttab\rreturn", "control \u{01}\u{1F}\u{08}\u{0C}",
        "slash / é ü 中文 🙂", "", "\u{7F} delete",
    ]

    static let changes: [HistoryChange] =
        awkward.enumerated().map { index, text in
            HistoryChange(
                entity: "Account", key: Int64(index) - 3, kind: .update, changedProperties: [text, "balance"])
        } + [
            HistoryChange(entity: "Row", key: .max, kind: .insert, changedProperties: ["amount", "memo"]),
            HistoryChange(entity: "Row", key: .min, kind: .delete, changedProperties: []),
            HistoryChange(
                entity: "Account", key: 9, kind: .delete, changedProperties: [],
                tombstone: [
                    "name": RecordedValue(.text("a \"b\" / c")), "balance": RecordedValue(.integer(-3)),
                    "rate": RecordedValue(.real(0.1)), "photo": RecordedValue(.blob(Data([0, 1, 255]))),
                    "note": RecordedValue(.null), "limit": RecordedValue(.real(-.infinity)),
                ]),
        ]

    @Test("hand-written history JSON decodes to the same changes and transactions")
    func roundTrips() throws {
        let decoded = try JSONDecoder().decode([HistoryChange].self, from: Data(try HistoryJSON.encode(Self.changes)))
        #expect(decoded == Self.changes)
        for author in Self.awkward.map(Optional.some) + [nil] {
            let transaction = HistoryTransaction(
                token: 42, timestamp: Date(timeIntervalSinceReferenceDate: 786_297_600.123_456_7), author: author,
                changes: Self.changes)
            let bytes = try HistoryJSON.encode(transaction)
            #expect(try JSONDecoder().decode(HistoryTransaction.self, from: Data(bytes)) == transaction)
        }
    }

    @Test("hand-written history JSON is JSONEncoder's with sorted keys, byte for byte")
    func matchesJSONEncoder() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Strings JSONEncoder escapes the same way (it writes other control characters differently).
        let ordinary = Self.changes.filter { !$0.changedProperties.contains { $0.contains("control") } }
        let hand = String(decoding: try HistoryJSON.encode(ordinary), as: UTF8.self)
        #expect(hand == String(decoding: try encoder.encode(ordinary), as: UTF8.self))
        let transaction = HistoryTransaction(
            token: 7, timestamp: Date(timeIntervalSinceReferenceDate: 1_000.5), author: "importer", changes: ordinary)
        let handTransaction = String(decoding: try HistoryJSON.encode(transaction), as: UTF8.self)
        #expect(handTransaction == String(decoding: try encoder.encode(transaction), as: UTF8.self))
    }

    @Test("an engine stores and returns awkward history strings unchanged", arguments: EngineKind.allCases)
    func engineRoundTrip(kind: EngineKind) throws {
        let store = try TestStore(kind)
        let engine = try HistoryStoreTests.open(store)
        defer { engine.close() }
        for (index, author) in Self.awkward.enumerated() {
            var changes = HistoryStoreTests.inserting(
                [HistoryStoreTests.account(Int64(index + 1), author)], author: author)
            changes.history?.changes[0].changedProperties = [author, "name"]
            try engine.commit(changes)
        }
        let history = try engine.history(after: 0, limit: nil)
        try #require(history.count == Self.awkward.count)
        for (transaction, author) in zip(history, Self.awkward) {
            #expect(transaction.author == author)
            #expect(transaction.changes.map(\.changedProperties) == [[author, "name"]])
        }
    }
}
