import StrataTestSupport

/// The data every workload runs on, generated once and shared by Strata and the raw baselines.
///
/// Row `i` (1-based, also its primary key) has:
/// - `amount`: `(i * 5761) mod 10_000`, a permutation within every block of 10,000 rows, so an
///   amount window of width 100 selects 1% of the rows;
/// - `memo`: about 30 ASCII bytes, e.g. `"Invoice #0000042 vendor 0042 EUR"`;
/// - `date`: seconds since 2001, scattered so that sorting by date is real work;
/// - `account`: account key `(i - 1) mod 1_000 + 1`.
struct Dataset: Sendable {
    static let accountCount = 1_000
    static let amountModulus: Int64 = 10_000
    /// Workload 4 runs this many queries, each selecting 1% of the rows.
    static let windowCount = 10
    /// Workload 6 runs this many operations per variant (N when N is smaller, as in the smoke test).
    static let freshContextOperations = 10_000

    let rowCount: Int
    let amounts: [Int64]
    let memos: [String]
    let dates: [Double]
    /// Account key per row.
    let accounts: [Int64]
    let accountNames: [String]
    /// Every row key once, in a fixed pseudo-random order (workload 3).
    let lookupOrder: [Int64]
    /// Amount windows of workload 4: `amount >= lowerBound && amount < upperBound`, each 1%.
    let windows: [Range<Int64>]

    init(rows: Int) {
        rowCount = rows
        var amounts: [Int64] = []
        var memos: [String] = []
        var dates: [Double] = []
        var accounts: [Int64] = []
        amounts.reserveCapacity(rows)
        memos.reserveCapacity(rows)
        dates.reserveCapacity(rows)
        accounts.reserveCapacity(rows)
        for i in 1...rows {
            let account = Int64((i - 1) % Self.accountCount + 1)
            amounts.append(Int64(i) * 5_761 % Self.amountModulus)
            memos.append("Invoice #\(Self.padded(i, 7)) vendor \(Self.padded(Int(account), 4)) EUR")
            dates.append(700_000_000 + Double(UInt64(i) &* 40_503 % 1_000_003) * 60)
            accounts.append(account)
        }
        self.amounts = amounts
        self.memos = memos
        self.dates = dates
        self.accounts = accounts
        accountNames = (1...Self.accountCount).map { "Account \(Self.padded($0, 4))" }
        var generator = SeededGenerator(seed: 0x5EED_5EED)
        lookupOrder = Array(Int64(1)...Int64(rows)).shuffled(using: &generator)
        let step = Self.amountModulus / Int64(Self.windowCount)
        windows = (0..<Int64(Self.windowCount)).map { k in (k * step)..<(k * step + Self.amountModulus / 100) }
    }

    /// Keys of the rows workload 6 looks up: every one a different row.
    var freshContextKeys: [Int64] {
        Array(lookupOrder.prefix(Self.freshContextOperations))
    }

    private static func padded(_ value: Int, _ width: Int) -> String {
        let digits = String(value)
        return String(repeating: "0", count: max(width - digits.count, 0)) + digits
    }
}

extension Dataset {
    /// How many rows the amount windows of workload 4 select together.
    var rowsInWindows: Int {
        amounts.reduce(0) { count, amount in
            count + (windows.contains { $0.contains(amount) } ? 1 : 0)
        }
    }
}
