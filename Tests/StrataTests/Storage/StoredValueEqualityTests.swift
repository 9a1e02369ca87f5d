import Foundation
import StrataStorage
import Testing

/// `StoredValue`'s equality is binary: two texts are equal exactly when their UTF-8 bytes are,
/// where Swift's `String` equality is canonical (it calls "é" and "e\u{301}" equal). Equal values
/// hash alike.
@Suite("stored value equality")
struct StoredValueEqualityTests {
    /// Pairs of texts whose bytes differ, though some are equal as Swift strings.
    static let different: [(String, String)] = [
        ("\u{E9}", "e\u{301}"), // é precomposed and decomposed: equal as Strings
        ("\u{1E0B}\u{323}", "\u{1E0D}\u{307}"), // d with two dots, marks in two orders: equal, 5 bytes each
        ("Cafe\u{301} de la gare, quai 4", "Caf\u{E9} de la gare, quai 4"), // the same, in long texts
        ("a", "b"), ("", "a"), ("ab", "abc"), ("short", "a text well past fifteen bytes"),
        (String(repeating: "x", count: 1_000), String(repeating: "x", count: 999) + "y"),
    ]

    @Test("texts with different bytes are different values, canonically equal or not")
    func differentBytes() {
        for (left, right) in Self.different {
            #expect(StoredValue.text(left) != .text(right), "\(left.debugDescription) vs \(right.debugDescription)")
            #expect(StoredValue.text(right) != .text(left))
        }
        #expect("\u{E9}" == "e\u{301}", "Swift's own equality is canonical")
        #expect("\u{1E0B}\u{323}" == "\u{1E0D}\u{307}", "canonically equal")
        #expect("\u{1E0B}\u{323}".utf8.count == "\u{1E0D}\u{307}".utf8.count, "with as many bytes")
    }

    @Test("texts with the same bytes are equal and hash alike, however they were made")
    func sameBytes() {
        let long = String(repeating: "ledger ", count: 200)
        let pairs: [(String, String)] = [
            ("", String(decoding: [UInt8](), as: UTF8.self)),
            ("e\u{301}", String(decoding: [0x65, 0xCC, 0x81], as: UTF8.self)),
            ("small", String("a small text".dropFirst(2).prefix(5))),
            (long, String(decoding: Array(long.utf8), as: UTF8.self)),
            ("ümlaut and more than fifteen bytes", "ümlaut and more " + "than fifteen bytes"),
        ]
        for (left, right) in pairs {
            #expect(StoredValue.text(left) == .text(right), "\(left.debugDescription)")
            #expect(StoredValue.text(left).hashValue == StoredValue.text(right).hashValue)
        }
        #expect(StoredValue.text("1") != .integer(1))
        #expect(StoredValue.blob(Data("a".utf8)) != .text("a"))
    }
}
