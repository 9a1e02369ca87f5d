import Foundation
import Testing

/// Every input a fuzz target ever stopped on, exactly as libFuzzer saved it, replayed through
/// the target's check. Each test names the bug and the commit that fixed it (see
/// Docs/Fuzzing.md). Add new crashers here with `FuzzRegressionTests.bytes(hex:)`.
@Suite("fuzz crasher regressions")
struct FuzzRegressionTests {
    // MARK: LMDB row decoder — overlong varints (fixed in RowCodec.readVarint)

    @Test("row: column count 0 written as the two-byte varint 80 00 is corrupt, not a second encoding")
    func rowOverlongColumnCount() {
        Self.expectClean(RowFuzzCheck.check, hex: "db000107cfffffff0001008000")
    }

    @Test("row: a text length written as the overlong varint c8 00 is corrupt")
    func rowOverlongTextLength() {
        Self.expectClean(
            RowFuzzCheck.check,
            hex: "0101020102000000000000000103c80078787878787878787878787878787878787878787878787878787878787878787878"
                + "7878787878787878787878787878787878787878787878787878787878787878787878787878")
    }

    @Test("row: a ten-byte varint with bits past 64 is corrupt, not silently truncated (written by hand)")
    func rowVarintPast64Bits() {
        Self.expectClean(RowFuzzCheck.check, hex: "0100010000000000000000808080808080808080" + "02")
    }

    // MARK: Predicate compiler — NaN held by an unsaved object (fixed in Filter.matches)

    @Test("predicate: $0.real > -greatestFiniteMagnitude is false for an object holding NaN, as in Foundation")
    func predicateNaNValueIsUnordered() {
        Self.expectClean(PredicateFuzzCheck.check, hex: "d31c283100310007")
    }

    static func bytes(hex: String) -> [UInt8] {
        let digits = Array(hex.utf8)
        return stride(from: 0, to: digits.count, by: 2).map {
            UInt8(String(decoding: digits[$0..<($0 + 2)], as: UTF8.self), radix: 16)!
        }
    }

    static func expectClean(_ check: ([UInt8]) throws(FuzzViolation) -> Void, hex: String) {
        do {
            try check(bytes(hex: hex))
        } catch {
            Issue.record("\(error)")
        }
    }
}
