/// What a workload read, folded into a few numbers, so Strata and the raw baseline can be
/// checked to have returned the same rows in the same order (and so no read is optimised away).
struct Checksum: Sendable, CustomStringConvertible {
    var rows = 0
    var amounts: Int64 = 0
    var memoBytes = 0
    var dates: Int64 = 0
    /// Order-sensitive hash of the (amount, date) sequence.
    var order: UInt64 = 0
    /// Bytes a raw baseline decoded but the workload does not compare (kept so the decoding is
    /// not optimised away); not part of equality.
    var unread = 0

    /// Folds one row's attributes in.
    @inline(__always)
    mutating func add(amount: Int64, memo: String, date: Double) {
        rows &+= 1
        amounts &+= amount
        memoBytes &+= memo.utf8.count
        let dateBits = Int64(date)
        dates &+= dateBits
        order = (order &* 0x100_0000_01B3) ^ UInt64(bitPattern: amount &* 31 &+ dateBits)
    }

    /// Folds in one object's amount only (workloads 3–5 read one attribute of what they load).
    @inline(__always)
    mutating func add(amount: Int64) {
        rows &+= 1
        amounts &+= amount
        order = (order &* 0x100_0000_01B3) ^ UInt64(bitPattern: amount)
    }

    var description: String {
        "\(rows) rows, amounts \(amounts), memo bytes \(memoBytes), dates \(dates), order \(order)"
    }
}

extension Checksum: Equatable {
    static func == (lhs: Checksum, rhs: Checksum) -> Bool {
        (lhs.rows, lhs.amounts, lhs.memoBytes, lhs.dates, lhs.order) == (
            rhs.rows, rhs.amounts, rhs.memoBytes, rhs.dates, rhs.order
        )
    }
}
