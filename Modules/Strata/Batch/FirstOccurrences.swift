import StrataStorage

/// The first position at which each value of a run occurred: which row of an upsert a repeated
/// unique value merges into, and whether a save's new objects repeat a unique value.
///
/// A `[StoredValue: Int]` did the same at two SipHash rounds a row (a look-up, then an insert),
/// which was the largest single cost of staging an upsert. This table hashes each value once:
/// an integer with SplitMix64's finalizer under a random per-process seed, any other value with its
/// `hashValue`; equal values (`StoredValue`'s `==`) always hash alike, and the slots are probed
/// linearly at most half full. Should a probe run ever grow long before that (integers that
/// happen to cluster under the cheap hash), the table rehashes every entry with `hashValue`,
/// Swift's own seeded SipHash, and stays there: no integers make it slower than the dictionary
/// it replaces by more than a constant. Other values hash as they did in the dictionary.
///
/// ```swift
/// var seen = FirstOccurrences(expecting: rows.count)
/// for (position, row) in rows.enumerated() {
///     if let first = seen.recordFirst(row[column], at: position) { print(position, "repeats", first) }
/// }
/// ```
struct FirstOccurrences {
    private var values: [StoredValue] = []
    private var positions: [Int] = []
    /// Per slot: 0 when free, else the number of the entry there plus one in the low 32 bits and
    /// the high 32 bits of its hash above them, so that a probe reads one word per slot and
    /// looks at an entry's value only when those bits match.
    private var slots: [UInt64]
    /// Whether every value is hashed with `hashValue` (after a long probe run).
    private(set) var keyed = false
    private let seed: UInt64

    /// The longest run of occupied slots a look-up may probe before the table rehashes with
    /// `hashValue`: the longest seen in 300 tables of 131,072 random or consecutive keys at the
    /// highest load (56), doubled and rounded up to a power of two.
    private static let longestProbe = 128
    /// The cheap hash's seed, random per process, so that which integers collide cannot be known
    /// beforehand.
    static let processSeed = UInt64.random(in: .min ... .max)
    private static let entryBits: UInt64 = 0xFFFF_FFFF

    /// A table with room for `count` values before it grows; `seed` is the cheap hash's (tests
    /// pass their own to make integers collide).
    init(expecting count: Int, seed: UInt64 = processSeed) {
        self.seed = seed
        var size = 16
        while size < count * 2 { size *= 2 }
        slots = Array(repeating: 0, count: size)
        values.reserveCapacity(count)
        positions.reserveCapacity(count)
    }

    /// The number of distinct values recorded.
    var count: Int { values.count }

    /// The position recorded for a value equal to `value`, or nil after recording `position` as
    /// `value`'s first (the values are `StoredValue`'s binary equality: `.null` equals `.null`,
    /// so callers that treat nulls as distinct skip them).
    mutating func recordFirst(_ value: StoredValue, at position: Int) -> Int? {
        let hash = hash(of: value)
        let tag = hash & ~Self.entryBits
        let mask = slots.count - 1
        var slot = Int(truncatingIfNeeded: hash) & mask
        var probes = 0
        while slots[slot] != 0 {
            let word = slots[slot]
            if word & ~Self.entryBits == tag {
                let entry = Int(word & Self.entryBits) - 1
                if Self.same(values[entry], value) { return positions[entry] }
            }
            slot = (slot + 1) & mask
            probes += 1
            if probes > Self.longestProbe && !keyed {
                keyed = true
                rebuild(size: slots.count)
                return recordFirst(value, at: position)
            }
        }
        precondition(values.count < Int(Self.entryBits), "more than 4,294,967,295 values in one table")
        values.append(value)
        positions.append(position)
        slots[slot] = tag | UInt64(values.count)
        if values.count * 2 > slots.count { rebuild(size: slots.count * 2) }
        return nil
    }

    /// `value`'s hash: the cheap one for an integer until ``keyed``, `hashValue` otherwise.
    func hash(of value: StoredValue) -> UInt64 {
        if !keyed, case .integer(let integer) = value {
            // SplitMix64's finalizer of the seeded integer: consecutive keys spread evenly (a
            // multiply-and-fold left probe runs of up to 183 slots among 100,000 to 160,000).
            var bits = UInt64(bitPattern: integer) ^ seed
            bits = (bits ^ (bits >> 30)) &* 0xBF58_476D_1CE4_E5B9
            bits = (bits ^ (bits >> 27)) &* 0x94D0_49BB_1331_11EB
            return bits ^ (bits >> 31)
        }
        return UInt64(bitPattern: Int64(value.hashValue))
    }

    /// `==`, with integers compared without the general switch over both values.
    @inline(__always)
    private static func same(_ lhs: StoredValue, _ rhs: StoredValue) -> Bool {
        if case .integer(let a) = lhs, case .integer(let b) = rhs { return a == b }
        return lhs == rhs
    }

    /// Lays the entries out again in `size` slots, each hashed as ``keyed`` now says.
    private mutating func rebuild(size: Int) {
        slots = Array(repeating: 0, count: size)
        let mask = size - 1
        for entry in values.indices {
            let hash = hash(of: values[entry])
            var slot = Int(truncatingIfNeeded: hash) & mask
            while slots[slot] != 0 { slot = (slot + 1) & mask }
            slots[slot] = hash & ~Self.entryBits | UInt64(entry + 1)
        }
    }
}
