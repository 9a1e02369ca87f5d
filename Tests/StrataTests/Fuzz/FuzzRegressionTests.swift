import Foundation
import Testing

/// Every input a fuzz target ever stopped on, exactly as libFuzzer saved it, replayed through
/// the target's check. Each test names the bug and the commit that fixed it (see
/// Docs/Fuzzing.md). Add new crashers here with `FuzzRegressionTests.bytes(hex:)`.
@Suite("fuzz crasher regressions")
struct FuzzRegressionTests {
    static func bytes(hex: String) -> [UInt8] {
        let digits = Array(hex.utf8)
        return stride(from: 0, to: digits.count, by: 2).map { UInt8(String(decoding: digits[$0..<($0 + 2)], as: UTF8.self), radix: 16)! }
    }

    static func expectClean(_ check: ([UInt8]) throws(FuzzViolation) -> Void, hex: String) {
        do {
            try check(bytes(hex: hex))
        } catch {
            Issue.record("\(error)")
        }
    }
}
