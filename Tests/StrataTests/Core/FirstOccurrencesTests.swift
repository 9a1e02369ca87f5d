import Foundation
import StrataStorage
import StrataTestSupport
import Testing

@testable import Strata

/// `FirstOccurrences` decides which row of an upsert a repeated unique value merges into and
/// whether a save's new objects repeat a unique value. It must answer exactly as the
/// `[StoredValue: Int]` it replaced, for every storage class and for integers that collide
/// under its cheap hash.
@Suite("first occurrences of stored values")
struct FirstOccurrencesTests {
    /// Seeded values of every class, drawn from small pools so that repeats are common:
    /// `-0.0` beside `0.0`, a precomposed `é` beside `e` and a combining accent, an integer
    /// beside the real of the same number, texts past the small-string length.
    static func values(count: Int, seed: UInt64) -> [StoredValue] {
        var random = SeededGenerator(seed: seed)
        let texts = [
            "é", "e\u{301}", "", "a", "A", "a longer text than fifteen bytes", "a longer text than fifteen bytez",
        ]
        let reals: [Double] = [0.0, -0.0, 1.0, 1.5, -1.5, .infinity, -.infinity, .ulpOfOne]
        return (0..<count).map { _ in
            switch Int.random(in: 0..<10, using: &random) {
            case 0: .null
            case 1: .real(reals.randomElement(using: &random)!)
            case 2: .text(texts.randomElement(using: &random)!)
            case 3: .blob(Data((0..<Int.random(in: 0..<4, using: &random)).map { UInt8($0) }))
            case 4: .integer([Int64.min, Int64.max, 0, -1, 1].randomElement(using: &random)!)
            default: .integer(Int64.random(in: -500...500, using: &random))
            }
        }
    }

    @Test("answers as a dictionary does, for every storage class")
    func matchesDictionary() {
        for seed in UInt64(1)...20 {
            let values = Self.values(count: 2_000, seed: seed)
            // A small expected count, so that the table grows several times on the way.
            var table = FirstOccurrences(expecting: Int(seed % 3) * 10, seed: seed &* 0x9E37_79B9_7F4A_7C15)
            var reference: [StoredValue: Int] = [:]
            for (position, value) in values.enumerated() {
                let expected = reference[value]
                if expected == nil { reference[value] = position }
                #expect(table.recordFirst(value, at: position) == expected, "seed \(seed), position \(position)")
            }
            #expect(table.count == reference.count)
            #expect(!table.keyed)
        }
    }

    @Test("integers that collide under the cheap hash switch the table to SipHash, answers unchanged")
    func collidingIntegers() {
        let seed: UInt64 = 0x1234_5678_9ABC_DEF0
        let probe = FirstOccurrences(expecting: 0, seed: seed)
        // Integers whose cheap hashes share their low 12 bits: one slot for all of them in every
        // table up to 4,096 slots, so a table expecting 200 (512 slots) sees a run past 128.
        var colliding: [Int64] = []
        var candidate: Int64 = 0
        while colliding.count < 200 {
            if probe.hash(of: .integer(candidate)) & 0xFFF == 0 { colliding.append(candidate) }
            candidate += 1
        }
        var table = FirstOccurrences(expecting: 200, seed: seed)
        for (position, integer) in colliding.enumerated() {
            #expect(table.recordFirst(.integer(integer), at: position) == nil)
        }
        #expect(table.keyed, "a probe run past 128 slots rehashes with hashValue")
        for (position, integer) in colliding.enumerated() {
            #expect(table.recordFirst(.integer(integer), at: 1_000 + position) == position)
        }
        #expect(table.recordFirst(.integer(-7), at: 5) == nil)
        #expect(table.count == 201)
    }

    @Test("a table that switches to SipHash while growing keeps every value, texts among the integers")
    func switchWhileGrowing() {
        let seed: UInt64 = 0x0FED_CBA9_8765_4321
        let probe = FirstOccurrences(expecting: 0, seed: seed)
        var colliding: [Int64] = []
        var candidate: Int64 = -1_000
        while colliding.count < 300 {
            if probe.hash(of: .integer(candidate)) & 0xFFF == 0 { colliding.append(candidate) }
            candidate += 1
        }
        // Expecting nothing: 16 slots, grown five times on the way, and switched at the 129th
        // colliding integer; a text after every third integer.
        var values: [StoredValue] = []
        for (number, integer) in colliding.enumerated() {
            values.append(.integer(integer))
            if number % 3 == 0 { values.append(.text("text \(number)")) }
        }
        var table = FirstOccurrences(expecting: 0, seed: seed)
        for (position, value) in values.enumerated() {
            #expect(table.recordFirst(value, at: position) == nil, "\(value) is new")
        }
        #expect(table.keyed)
        for (position, value) in values.enumerated().reversed() {
            #expect(table.recordFirst(value, at: -1) == position, "\(value) was first at \(position)")
        }
        #expect(table.count == values.count)
    }

    @Test("a run of consecutive keys stays on the cheap hash, at the highest load", arguments: [1, 2, 3] as [UInt64])
    func consecutiveKeys(seed: UInt64) {
        // 131,072 keys fill 262,144 slots to one half, the most before the table grows.
        var table = FirstOccurrences(expecting: 131_072, seed: seed &* 0xD1B5_4A32_D192_ED03)
        for key in 0..<131_072 {
            if table.recordFirst(.integer(Int64(10_000_000 + key)), at: key) != nil {
                Issue.record("key \(key) repeats")
            }
        }
        #expect(!table.keyed)
        #expect(table.recordFirst(.integer(10_000_000 + 99_999), at: 0) == 99_999)
    }
}
