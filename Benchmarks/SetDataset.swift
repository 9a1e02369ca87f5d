/// The data of the set-based workloads 15–20, generated once and shared by Strata and the raw
/// baselines.
///
/// Entry `i` (0-based; the raw stores' key is `i + 1`) has:
/// - `externalID`: `10_000_000 + i` (unique);
/// - `category`: one of 10 names, chosen by a hash of `i`, so a category is about 10% of the
///   rows, scattered through the table;
/// - `amount`: `(i * 7919) mod 10_000`;
/// - `note`: about 20 ASCII bytes, e.g. `"Entry 0000042 settled"`.
///
/// Every ``lineEvery``-th entry (`i` a multiple of it) has one line, so deleting a category
/// cascades to about 2.5% of the entries' count in lines.
struct SetDataset: Sendable {
    static let categories = [
        "books", "dining", "fees", "fuel", "gifts", "groceries", "health", "rent", "travel", "utilities",
    ]
    static let lineEvery = 4
    static let firstExternalID: Int64 = 10_000_000

    let rowCount: Int
    /// Index into ``categories`` per entry.
    let categoryIndexes: [UInt8]
    let amounts: [Int64]
    let notes: [String]

    init(rows: Int) {
        rowCount = rows
        var categoryIndexes: [UInt8] = []
        var amounts: [Int64] = []
        var notes: [String] = []
        categoryIndexes.reserveCapacity(rows)
        amounts.reserveCapacity(rows)
        notes.reserveCapacity(rows)
        for i in 0..<rows {
            var hash = UInt64(i) &+ 0x9E37_79B9_7F4A_7C15
            hash = (hash ^ (hash >> 30)) &* 0xBF58_476D_1CE4_E5B9
            hash = (hash ^ (hash >> 27)) &* 0x94D0_49BB_1331_11EB
            hash ^= hash >> 31
            categoryIndexes.append(UInt8(hash % UInt64(Self.categories.count)))
            amounts.append(Int64(i) * 7_919 % 10_000)
            let digits = String(i)
            notes.append("Entry " + String(repeating: "0", count: max(7 - digits.count, 0)) + digits + " settled")
        }
        self.categoryIndexes = categoryIndexes
        self.amounts = amounts
        self.notes = notes
    }

    func externalID(_ i: Int) -> Int64 { Self.firstExternalID + Int64(i) }
    func category(_ i: Int) -> String { Self.categories[Int(categoryIndexes[i])] }

    /// Lines: line `j` belongs to entry `j * lineEvery`.
    var lineCount: Int { (rowCount + Self.lineEvery - 1) / Self.lineEvery }
    func lineEntry(_ j: Int) -> Int { j * Self.lineEvery }
    func lineLabel(_ j: Int) -> String { "line \(j)" }

    /// Rows of one upsert (workload 16): ``upsertCount`` rows, half of them the external IDs
    /// of existing entries spread through the table, half new ones, different for every
    /// `serial` (each run, and each side of it, inserts rows of its own).
    func upsert(serial: Int) -> UpsertRows {
        let half = upsertCount / 2
        let stride = max(rowCount / max(half, 1), 1)
        var rows = UpsertRows()
        rows.externalIDs.reserveCapacity(upsertCount)
        for k in 0..<half {
            rows.externalIDs.append(externalID((k * stride + serial) % rowCount))
        }
        let fresh = Self.firstExternalID + Int64(rowCount) + Int64(serial * half)
        for k in 0..<(upsertCount - half) { rows.externalIDs.append(fresh + Int64(k)) }
        rows.amounts = rows.externalIDs.indices.map { Int64($0 % 1_000 + serial) }
        rows.notes = rows.externalIDs.indices.map { "Upserted \($0) in run \(serial)" }
        rows.categories = rows.externalIDs.indices.map { Self.categories[$0 % Self.categories.count] }
        rows.existing = half
        return rows
    }

    /// Rows per upsert: a tenth of the entries (100,000 of 1,000,000).
    var upsertCount: Int { max(rowCount / 10, 2) }
}

/// The rows of one upsert: an entry per index. The update sets `amount` and `note`; a new row
/// takes `category` too.
struct UpsertRows: Sendable {
    var externalIDs: [Int64] = []
    var categories: [String] = []
    var amounts: [Int64] = []
    var notes: [String] = []
    /// How many of them exist already (the first ones).
    var existing = 0

    var count: Int { externalIDs.count }
}
