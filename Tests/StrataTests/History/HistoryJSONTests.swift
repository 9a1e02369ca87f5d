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
        let decoded = try JSONDecoder().decode(HistoryChangeList.self, from: Data(try HistoryJSON.encode(Self.changes)))
        #expect(decoded.changes == Self.changes)
        for author in Self.awkward.map(Optional.some) + [nil] {
            let transaction = HistoryTransaction(
                token: 42, timestamp: Date(timeIntervalSinceReferenceDate: 786_297_600.123_456_7), author: author,
                changes: Self.changes)
            let bytes = try HistoryJSON.encode(transaction)
            #expect(try JSONDecoder().decode(HistoryTransaction.self, from: Data(bytes)) == transaction)
        }
    }

    /// A bulk save: runs of one entity and kind without properties or tombstones, between and
    /// around single changes.
    static let bulk: [HistoryChange] =
        (1...5).map { HistoryChange(entity: "Row", key: $0, kind: .insert, changedProperties: []) }
        + [HistoryChange(entity: "Row", key: 6, kind: .insert, changedProperties: ["memo"])]
        + (7...8).map { HistoryChange(entity: "Row", key: $0, kind: .insert, changedProperties: []) }
        + (1...3).map { HistoryChange(entity: "Entry", key: $0, kind: .insert, changedProperties: []) }
        + [HistoryChange(entity: "Entry", key: 4, kind: .delete, changedProperties: [])]
        + (5...6).map { HistoryChange(entity: "Entry", key: $0, kind: .delete, changedProperties: []) }
        + [HistoryChange(entity: "Row", key: 9, kind: .update, changedProperties: [])]

    @Test("a bulk save's changes are written as runs of keys and read back one change per key")
    func runs() throws {
        let json = String(decoding: try HistoryJSON.encode(Self.bulk), as: UTF8.self)
        #expect(json.hasPrefix(#"[{"entity":"Row","keys":[1,2,3,4,5],"kind":"insert"},{"changedProperties":["memo"]"#))
        #expect(json.contains(#"{"entity":"Entry","keys":[4,5,6],"kind":"delete"}"#))
        #expect(json.hasSuffix(#"{"changedProperties":[],"entity":"Row","key":9,"kind":"update","tombstone":{}}]"#))
        let decoded = try JSONDecoder().decode(HistoryChangeList.self, from: Data(json.utf8))
        #expect(decoded.changes == Self.bulk)
        let transaction = HistoryTransaction(
            token: 3, timestamp: Date(timeIntervalSinceReferenceDate: 5), author: nil, changes: Self.bulk)
        let bytes = try HistoryJSON.encode(transaction)
        #expect(try JSONDecoder().decode(HistoryTransaction.self, from: Data(bytes)) == transaction)
    }

    @Test("updates that changed the same properties are written as one run and read back one change per key")
    func updateRuns() throws {
        let both = ["amount", "memo"]
        let updates =
            [5, 3, 9].map { HistoryChange(entity: "Row", key: $0, kind: .update, changedProperties: both) }
            + [HistoryChange(entity: "Row", key: 4, kind: .update, changedProperties: ["memo", "amount"])]
            + [HistoryChange(entity: "Entry", key: 4, kind: .update, changedProperties: ["memo", "amount"])]
            + [
                HistoryChange(
                    entity: "Entry", key: 6, kind: .update, changedProperties: ["memo", "amount"],
                    tombstone: ["memo": RecordedValue(.text("kept"))])
            ]
            + (7...8).map { HistoryChange(entity: "Entry", key: $0, kind: .delete, changedProperties: ["memo"]) }
        let json = String(decoding: try HistoryJSON.encode(updates), as: UTF8.self)
        let run = #"[{"changedProperties":["amount","memo"],"entity":"Row","keys":[5,3,9],"kind":"update"},"#
        #expect(json.hasPrefix(run))
        // Properties in another order, another entity, a tombstone: single changes.
        #expect(json.contains(#"{"changedProperties":["memo","amount"],"entity":"Row","key":4,"kind":"update","#))
        #expect(json.contains(#"{"changedProperties":["memo","amount"],"entity":"Entry","key":4,"kind":"update","#))
        #expect(json.contains(#""entity":"Entry","key":6,"kind":"update","tombstone":{"memo""#))
        #expect(json.hasSuffix(#"{"changedProperties":["memo"],"entity":"Entry","keys":[7,8],"kind":"delete"}]"#))
        #expect(try JSONDecoder().decode(HistoryChangeList.self, from: Data(json.utf8)).changes == updates)
        // 10,000 objects with one attribute changed: their keys, not 10,000 objects.
        let many = (0..<10_000).map {
            HistoryChange(entity: "Row", key: Int64($0) * 2, kind: .update, changedProperties: ["value"])
        }
        let bytes = try HistoryJSON.encode(many)
        #expect(bytes.count < 10_000 * 8, "\(bytes.count) bytes")
        #expect(try JSONDecoder().decode(HistoryChangeList.self, from: Data(bytes)).changes == many)
    }

    @Test("a record's key runs are written as ranges after its changes and read back one change per key")
    func keyRuns() throws {
        var record = HistoryRecord(author: "a", changes: Array(Self.bulk.prefix(2)))
        record.keyRuns = [
            HistoryKeyRun(entity: "Row", kind: .insert, keys: [100, 101, 102]),
            HistoryKeyRun(entity: "Entry", kind: .delete, keys: [.max - 1, .max]),
            HistoryKeyRun(entity: "Row", kind: .update, keys: []),
            HistoryKeyRun(entity: "Row", kind: .update, changedProperties: ["amount", "a \"b\""], keys: [9, 4, 7]),
            HistoryKeyRun(entity: "Row", kind: .update, changedProperties: ["note"], keys: [20, 21]),
        ]
        let json = String(decoding: try HistoryJSON.encode(record), as: UTF8.self)
        #expect(json.contains(#"{"count":3,"entity":"Row","first":100,"kind":"insert"}"#))
        #expect(
            json.contains(#"{"changedProperties":["amount","a \"b\""],"entity":"Row","keys":[9,4,7],"kind":"update"}"#))
        #expect(json.contains(#"{"changedProperties":["note"],"count":2,"entity":"Row","first":20,"kind":"update"}"#))
        let decoded = try JSONDecoder().decode(HistoryChangeList.self, from: Data(json.utf8))
        #expect(decoded.changes == record.allChanges)
        #expect(decoded.changes.count == 2 + 3 + 2 + 3 + 2)
        let transaction = HistoryTransaction(
            token: 3, timestamp: Date(timeIntervalSinceReferenceDate: 5), author: nil, changes: record.changes)
        let bytes = try HistoryJSON.encode(transaction, keyRuns: record.keyRuns)
        let read = try JSONDecoder().decode(HistoryTransaction.self, from: Data(bytes))
        #expect(read.changes == record.allChanges)
        // A damaged range is a decoding error, not a loop over a billion keys.
        for damaged in [
            #"[{"count":-1,"entity":"Row","first":1,"kind":"insert"}]"#,
            #"[{"count":3000000000,"entity":"Row","first":1,"kind":"insert"}]"#,
            #"[{"count":2,"entity":"Row","first":9223372036854775807,"kind":"insert"}]"#,
        ] {
            #expect(throws: DecodingError.self) {
                try JSONDecoder().decode(HistoryChangeList.self, from: Data(damaged.utf8))
            }
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
        var bulk = HistoryStoreTests.inserting([HistoryStoreTests.account(100, "bulk")], author: "bulk")
        bulk.history?.changes = Self.bulk
        try engine.commit(bulk)
        #expect(try engine.history(after: Int64(Self.awkward.count), limit: nil).map(\.changes) == [Self.bulk])
    }
}
