import Foundation
import Strata
import StrataStorage
import StrataTestSupport
import Testing

/// `FilterEvaluator` (membership constants in hashed sets) answers exactly as the reference
/// `Filter.matches` for every value and every list of constants, on the values where the
/// storage classes meet: integers and reals of equal value, signed zeros, NaN, integers past
/// 2^53, canonically equivalent but byte-different texts, blobs and null.
@Suite("filter evaluator")
struct FilterEvaluatorTests {
    static let pool: [StoredValue] = [
        .null,
        .integer(0), .integer(1), .integer(-1), .integer(3), .integer(Int64.max), .integer(Int64.min),
        .integer(1 << 53), .integer((1 << 53) + 1), .integer(-(1 << 53) - 1),
        .real(0), .real(-0.0), .real(1), .real(0.5), .real(3), .real(-1), .real(.nan), .real(.infinity),
        .real(-.infinity),
        .real(9_007_199_254_740_992), .real(Double(Int64.max)), .real(Double(Int64.min)), .real(.ulpOfOne),
        .text(""), .text("a"), .text("A"), .text("a\u{0}"), .text("\u{E9}"), .text("e\u{301}"), .text("\u{C5}"),
        .text("A\u{30A}"),
        .text("\u{FB01}"), .text("fi"), .text("3"),
        .blob(Data()), .blob(Data([0])), .blob(Data([0, 0])), .blob(Data([0xFF])), .blob(Data("a".utf8)),
    ]

    /// Every value of the pool against every list: the evaluator and the reference agree.
    @Test("membership answers as Filter.matches for random lists of edge values, alone and inside and/or/not")
    func membershipMatchesReference() {
        let seed = UInt64.random(in: 0...UInt64.max)
        print("filter evaluator seed: \(seed)")
        var random = SeededGenerator(seed: seed)
        var disagreements: [String] = []
        var checked = 0
        for _ in 0..<1_500 {
            let size = Int(random.next() % 12)
            let constants = (0..<size).map { _ in Self.pool[Int(random.next() % UInt64(Self.pool.count))] }
            let membership = Filter.isIn(column: 0, values: constants)
            let filters: [Filter] = [
                membership,
                .not(membership),
                .and([membership, .isNotNull(column: 1)]),
                .or([.isNull(column: 1), .not(.or([membership, .constant(false)]))]),
                .and([.primaryKey(.greaterThan, 1), .or([membership, .isIn(column: 1, values: constants.reversed())])]),
            ]
            for filter in filters {
                let evaluator = FilterEvaluator(filter)
                for value in Self.pool {
                    for other in [StoredValue.null, value] {
                        for key in [Int64(1), 2] {
                            let row = [value, other]
                            let want = filter.matches(row, key: key)
                            let got = evaluator.matches(row, key: key)
                            checked += 1
                            if want != got, disagreements.count < 5 {
                                disagreements.append(
                                    "\(filter) on \(row), key \(key): reference \(want), evaluator \(got)")
                            }
                        }
                    }
                }
            }
        }
        #expect(disagreements.isEmpty, "seed \(seed): \(disagreements)")
        #expect(checked == 1_500 * 5 * Self.pool.count * 4)
    }

    @Test("the cases that tell a hashed lookup from the reference rule")
    func knownCases() {
        let members = MembershipSet([
            .integer(3), .real(-0.0), .real(9_007_199_254_740_992), .text("\u{E9}"), .real(.nan), .null,
        ])
        #expect(members.contains(.real(3)))
        #expect(members.contains(.integer(0)))
        #expect(members.contains(.real(0)))
        #expect(
            members.contains(.integer((1 << 53) + 1)), "Double(2^53 + 1) rounds to 2^53, as StoredValue.order compares")
        #expect(!members.contains(.integer((1 << 53) + 2)))
        #expect(!members.contains(.text("e\u{301}")), "canonically equivalent, but other bytes")
        #expect(members.contains(.text("\u{E9}")))
        #expect(!members.contains(.real(.nan)))
        #expect(!members.contains(.null))
        #expect(!members.contains(.text("3")))
        #expect(!MembershipSet([.integer((1 << 53) + 1)]).contains(.integer(1 << 53)), "integers compare exactly")
    }
}
